#include "report/model_summary.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "io/om/ge_model_builder.h"
#include "ir/model.h"
#include "kernels/ge/ge_lowering.h"
#include "ir/opdefs/op_registry.h"
#include "ir/opdefs/shape_inference.h"
#include "util/units.h"

namespace kiln {

ModelSummary summarizeModel(const Model& m, const InferenceReport& inference,
                            const std::vector<std::string>& warnings, size_t largestCount) {
  ModelSummary s;
  s.file = m.sourcePath;
  s.producer = m.producerName + (m.producerVersion.empty() ? "" : " " + m.producerVersion);
  s.irVersion = std::to_string(m.irVersion);
  s.opsets = m.opsets;
  for (const Value* v : m.graph->inputs()) s.inputs.push_back({v->name(), v->type().toString()});
  for (const Value* v : m.graph->outputs()) s.outputs.push_back({v->name(), v->type().toString()});
  s.mainGraphNodes = static_cast<int64_t>(m.graph->numNodes());

  std::map<std::string, int64_t> ops;
  std::set<std::string> kilnWritten;  // GE-domain ops of an .om Kiln wrote: they carry their Kiln type
  std::vector<ModelSummary::TensorEntry> tensors;
  auto addTensor = [&](const std::string& name, const Tensor& t) {
    ++s.parameterTensors;
    s.parameters += t.numel();
    s.parameterBytes += static_cast<int64_t>(t.byteSize());
    std::string type = std::string(dtypeName(t.dtype())) + "[" +
                       Shape::ofStatic(t.dims()).toString() + "]";
    tensors.push_back({name, type, static_cast<int64_t>(t.byteSize())});
  };
  m.graph->forEachGraph([&](const Graph& g) {
    if (g.parent()) ++s.subgraphs;
    s.nodes += static_cast<int64_t>(g.numNodes());
    for (const Value* v : g.initializers()) addTensor(v->name(), *v->constant());
    for (const Value* v : g.values())
      if (v->type().isTensor()) ++s.formats[std::string(formatName(v->type().format))];
    for (const Node* n : g.nodes()) {
      ++ops[n->qualifiedType()];
      if (n->attr("_kiln.op_type")) kilnWritten.insert(n->qualifiedType());
      ++s.computeUnits[std::string(computeUnitName(OpRegistry::global().unitOf(*n, m.opsetFor(n->domain()))))];
      // A constant node (ONNX Constant, GE's Const): no inputs, its tensor in `value`.
      if (n->numInputs() == 0)
        if (const Attribute* a = n->attr("value"))
          if (const Tensor* t = a->get<Tensor>()) addTensor(n->output(0) ? n->output(0)->name() : n->name(), *t);
    }
  });
  if (s.formats.size() == 1 && s.formats.count("ND")) s.formats.clear();  // nothing to say about plain layouts
  s.metadata = m.metadata;
  s.ops.assign(ops.begin(), ops.end());
  std::stable_sort(s.ops.begin(), s.ops.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::stable_sort(tensors.begin(), tensors.end(), [](const auto& a, const auto& b) { return a.bytes > b.bytes; });
  if (tensors.size() > largestCount) tensors.resize(largestCount);
  s.largestTensors = std::move(tensors);
  for (const auto& [op, count] : inference.unknownOps) {
    if (op.starts_with(std::string(om::kGeDomain) + ":")) {
      const std::string type = op.substr(3);
      s.opNotes[op] = geops::lowersGeType(type) || kilnWritten.count(op) ? "GE op" : "GE op, no semantics in Kiln: not run";
      continue;
    }
    s.unsupportedOps[op] = count;
  }

  s.warnings = warnings;
  s.warnings.insert(s.warnings.end(), inference.warnings.begin(), inference.warnings.end());
  if (inference.warningsDropped)
    s.warnings.push_back(std::to_string(inference.warningsDropped) + " more inference warnings not shown");
  return s;
}

Json ModelSummary::toJson() const {
  Json j = Json::object();
  j.set("file", file);
  j.set("producer", producer);
  j.set("ir_version", irVersion);
  Json opsetsJ = Json::object();
  for (const auto& [d, v] : opsets) opsetsJ.set(d.empty() ? "ai.onnx" : d, v);
  j.set("opsets", opsetsJ);
  auto ports = [](const std::vector<Port>& ps) {
    Json a = Json::array();
    for (const auto& p : ps) {
      Json o = Json::object();
      o.set("name", p.name);
      o.set("type", p.type);
      a.push(o);
    }
    return a;
  };
  j.set("inputs", ports(inputs));
  j.set("outputs", ports(outputs));
  j.set("nodes", nodes);
  j.set("main_graph_nodes", mainGraphNodes);
  j.set("subgraphs", subgraphs);
  Json opsJ = Json::object();
  for (const auto& [op, c] : ops) opsJ.set(op, c);
  j.set("ops", opsJ);
  Json params = Json::object();
  params.set("count", parameters);
  params.set("bytes", parameterBytes);
  params.set("tensors", parameterTensors);
  j.set("parameters", params);
  Json largest = Json::array();
  for (const auto& t : largestTensors) {
    Json o = Json::object();
    o.set("name", t.name);
    o.set("type", t.type);
    o.set("bytes", t.bytes);
    largest.push(o);
  }
  j.set("largest_tensors", largest);
  Json units = Json::object();
  for (const auto& [u, c] : computeUnits) units.set(u, c);
  j.set("compute_units", units);
  Json formatsJ = Json::object();
  for (const auto& [f, c] : formats) formatsJ.set(f, c);
  j.set("formats", formatsJ);
  Json metaJ = Json::object();
  for (const auto& [k, v] : metadata) metaJ.set(k, v);
  j.set("metadata", metaJ);
  Json unsupported = Json::object();
  for (const auto& [op, c] : unsupportedOps) unsupported.set(op, c);
  j.set("unsupported_ops", unsupported);
  if (!opNotes.empty()) {
    Json notes = Json::object();
    for (const auto& [op, note] : opNotes) notes.set(op, note);
    j.set("op_notes", std::move(notes));
  }
  Json warn = Json::array();
  for (const auto& w : warnings) warn.push(w);
  j.set("warnings", warn);
  return j;
}

std::string ModelSummary::toText() const {
  std::ostringstream os;
  auto row = [&](const std::string& k, const std::string& v) { os << padRight(k, 12) << v << "\n"; };
  row("Model", file);
  std::string opsetList;
  for (const auto& [d, v] : opsets)
    opsetList += (opsetList.empty() ? "" : ", ") + (d.empty() ? std::string("ai.onnx") : d) + " " + std::to_string(v);
  row("Producer", (producer.empty() ? std::string("(unknown)") : producer) + "   IR " + irVersion + "   opsets " +
                      opsetList);
  size_t w = 0;
  for (const auto& p : inputs) w = std::max(w, displayWidth(p.name));
  for (const auto& p : outputs) w = std::max(w, displayWidth(p.name));
  for (size_t i = 0; i < inputs.size(); ++i) row(i ? "" : "Inputs", padRight(inputs[i].name, w + 2) + inputs[i].type);
  if (inputs.empty()) row("Inputs", "(none)");
  for (size_t i = 0; i < outputs.size(); ++i)
    row(i ? "" : "Outputs", padRight(outputs[i].name, w + 2) + outputs[i].type);
  row("Nodes", withThousands(nodes) + (subgraphs ? " (main graph " + withThousands(mainGraphNodes) + ", " +
                                                       std::to_string(subgraphs) + " subgraphs)"
                                                 : ""));
  std::string unitsLine;
  for (const auto& [u, c] : computeUnits) unitsLine += (unitsLine.empty() ? "" : ", ") + u + " " + withThousands(c);
  row("Units", unitsLine.empty() ? "-" : unitsLine);
  if (!formats.empty()) {
    std::string formatsLine;
    for (const auto& [f, c] : formats) formatsLine += (formatsLine.empty() ? "" : ", ") + f + " " + withThousands(c);
    row("Formats", formatsLine);
  }
  row("Parameters", withThousands(parameters) + " (" + formatBytes(static_cast<double>(parameterBytes)) + ") in " +
                        withThousands(parameterTensors) + " tensors");

  if (!metadata.empty()) {
    os << "\nMetadata\n";
    size_t kw = 0;
    for (const auto& [k, v] : metadata) kw = std::max(kw, displayWidth(k));
    for (const auto& [k, v] : metadata)  // values can be long (ONNX metadata_props): one line each
      os << "  " << padRight(k, kw + 2) << (v.size() > 100 ? v.substr(0, 97) + "..." : v) << "\n";
  }

  os << "\nOp histogram\n";
  size_t ow = 0;
  for (const auto& [op, c] : ops) ow = std::max(ow, displayWidth(op));
  for (const auto& [op, c] : ops)
    os << "  " << padRight(op, ow + 2) << padLeft(withThousands(c), 8)
       << (unsupportedOps.count(op) ? "  unsupported" : opNotes.count(op) ? "  " + opNotes.at(op) : "") << "\n";

  if (!largestTensors.empty()) {
    os << "\nLargest tensors\n";
    size_t nw = 0, tw = 0;
    for (const auto& t : largestTensors) {
      nw = std::max(nw, displayWidth(t.name));
      tw = std::max(tw, displayWidth(t.type));
    }
    for (const auto& t : largestTensors)
      os << "  " << padRight(t.name, nw + 2) << padRight(t.type, tw) << padLeft(formatBytes(static_cast<double>(t.bytes)), 12)
         << "\n";
  }

  os << "\nUnsupported ops: ";
  if (unsupportedOps.empty()) {
    os << "none\n";
  } else {
    bool first = true;
    for (const auto& [op, c] : unsupportedOps) {
      os << (first ? "" : ", ") << op << " ×" << c;
      first = false;
    }
    os << "\n";
  }
  os << "Warnings: " << (warnings.empty() ? "none" : std::to_string(warnings.size())) << "\n";
  for (const auto& wline : warnings) os << "  - " << wline << "\n";
  return os.str();
}

}  // namespace kiln
