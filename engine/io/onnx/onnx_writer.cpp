#include "io/onnx/onnx_writer.h"

#include <onnx/onnx_pb.h>

#include <fstream>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "ir/opdefs/proto_convert.h"

namespace kiln {
namespace {

class Exporter {
 public:
  Exporter(uint64_t threshold, std::ofstream* dataFile, std::string dataName)
      : threshold_(threshold), dataFile_(dataFile), dataName_(std::move(dataName)) {}

  void writeGraph(const Graph& g, onnx::GraphProto* out);

 private:
  const std::string& nameOf(const Value* v);
  void writeTensor(const Tensor& t, const std::string& name, onnx::TensorProto* out);
  static void graphCallback(const Graph& g, onnx::GraphProto* out, void* self) {
    static_cast<Exporter*>(self)->writeGraph(g, out);
  }

  uint64_t threshold_;
  std::ofstream* dataFile_;
  std::string dataName_;
  uint64_t dataOffset_ = 0;
  std::unordered_map<const Value*, std::string> names_;
  std::unordered_set<std::string> used_;
};

const std::string& Exporter::nameOf(const Value* v) {
  auto it = names_.find(v);
  if (it != names_.end()) return it->second;
  std::string n = v->name().empty() ? "v" + std::to_string(v->id()) : v->name();
  if (used_.count(n)) {
    n += "__" + std::to_string(v->id());
    while (used_.count(n)) n += "_";
  }
  used_.insert(n);
  return names_.emplace(v, std::move(n)).first->second;
}

void Exporter::writeTensor(const Tensor& t, const std::string& name, onnx::TensorProto* out) {
  if (!dataFile_ || t.dtype() == DType::String || t.byteSize() < threshold_ || t.byteSize() == 0) {
    onnxio::toTensorProto(t, name, out, true);
    return;
  }
  onnxio::toTensorProto(t, name, out, false);
  // Offsets aligned to 4 KiB so the reader can map tensors page-aligned.
  const uint64_t aligned = (dataOffset_ + 4095) / 4096 * 4096;
  if (aligned > dataOffset_) {
    std::string pad(aligned - dataOffset_, '\0');
    dataFile_->write(pad.data(), static_cast<std::streamsize>(pad.size()));
  }
  dataFile_->write(reinterpret_cast<const char*>(t.data()), static_cast<std::streamsize>(t.byteSize()));
  out->set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&](const char* k, const std::string& v) {
    auto* e = out->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  add("location", dataName_);
  add("offset", std::to_string(aligned));
  add("length", std::to_string(t.byteSize()));
  dataOffset_ = aligned + t.byteSize();
}

void Exporter::writeGraph(const Graph& g, onnx::GraphProto* out) {
  out->set_name(g.name().empty() ? "graph" : g.name());
  // Inputs and initializers first so their names win clashes.
  for (const Value* v : g.inputs()) {
    auto* vi = out->add_input();
    vi->set_name(nameOf(v));
    onnxio::toTypeProto(v->type(), vi->mutable_type());
    if (!v->docString().empty()) vi->set_doc_string(v->docString());
  }
  for (const Value* v : g.initializers()) writeTensor(*v->constant(), nameOf(v), out->add_initializer());

  auto order = g.topologicalOrder();
  std::vector<Node*> nodes = order ? *order : std::vector<Node*>(g.nodes().begin(), g.nodes().end());
  for (const Node* n : nodes) {
    auto* np = out->add_node();
    np->set_op_type(n->opType());
    if (!n->domain().empty()) np->set_domain(n->domain());
    if (!n->name().empty()) np->set_name(n->name());
    if (!n->docString().empty()) np->set_doc_string(n->docString());
    for (const Value* v : n->inputs()) np->add_input(v ? nameOf(v) : std::string());
    for (const Value* v : n->outputs()) np->add_output(v ? nameOf(v) : std::string());
    for (const auto& a : n->attributes()) {
      auto* ap = np->add_attribute();
      onnxio::toAttributeProto(a.name, a.value, ap, true, &Exporter::graphCallback, this);
      if (ap->type() == onnx::AttributeProto::TENSOR) writeTensor(*a.value.get<Tensor>(), "", ap->mutable_t());
    }
    for (const Value* v : n->outputs()) {
      if (!v || v->isGraphOutput() || !v->type().known()) continue;
      auto* vi = out->add_value_info();
      vi->set_name(nameOf(v));
      onnxio::toTypeProto(v->type(), vi->mutable_type());
    }
  }
  for (const Value* v : g.outputs()) {
    auto* vi = out->add_output();
    vi->set_name(nameOf(v));
    onnxio::toTypeProto(v->type(), vi->mutable_type());
  }
}

void fillModel(const Model& m, onnx::ModelProto& proto, Exporter& ex, const OnnxWriteOptions& options) {
  proto.set_ir_version(m.irVersion > 0 ? m.irVersion : 8);
  proto.set_producer_name(m.producerName.empty() ? "kiln" : m.producerName);
  if (!m.producerVersion.empty()) proto.set_producer_version(m.producerVersion);
  if (!m.domain.empty()) proto.set_domain(m.domain);
  if (m.modelVersion) proto.set_model_version(m.modelVersion);
  if (!m.docString.empty()) proto.set_doc_string(m.docString);
  std::map<std::string, int64_t> opsets = m.opsets;
  // Every domain a node uses must be imported.
  m.graph->forEachGraph([&](const Graph& g) {
    for (const Node* n : g.nodes())
      if (!opsets.count(n->domain())) opsets[n->domain()] = 1;
  });
  for (const auto& [d, v] : opsets) {
    auto* op = proto.add_opset_import();
    op->set_domain(d);
    op->set_version(v);
  }
  for (const auto& [k, v] : m.metadata) {
    auto* p = proto.add_metadata_props();
    p->set_key(k);
    p->set_value(v);
  }
  for (const auto& f : m.functionProtos) proto.add_functions()->ParseFromString(f);
  ex.writeGraph(*m.graph, proto.mutable_graph());
  if (!options.writeValueInfo) proto.mutable_graph()->clear_value_info();
}

uint64_t totalConstantBytes(const Model& m) {
  uint64_t total = 0;
  m.graph->forEachGraph([&](const Graph& g) {
    for (const Value* v : g.initializers()) total += v->constant()->byteSize();
  });
  return total;
}

}  // namespace

std::string writeOnnxBytes(const Model& model) {
  onnx::ModelProto proto;
  Exporter ex(0, nullptr, {});
  fillModel(model, proto, ex, {});
  std::string bytes;
  if (!proto.SerializeToString(&bytes)) throw std::runtime_error("model too large to serialize inline (> 2 GiB)");
  return bytes;
}

void writeOnnxFile(const Model& model, const std::string& path, const OnnxWriteOptions& options) {
  uint64_t threshold = options.externalDataThreshold;
  if (threshold == 0 && totalConstantBytes(model) > (1ull << 30) * 3 / 2) threshold = 1024;
  std::ofstream dataFile;
  std::string dataName;
  if (threshold > 0) {
    const auto slash = path.find_last_of('/');
    dataName = (slash == std::string::npos ? path : path.substr(slash + 1)) + ".data";
    const std::string dataPath = (slash == std::string::npos ? std::string() : path.substr(0, slash + 1)) + dataName;
    dataFile.open(dataPath, std::ios::binary | std::ios::trunc);
    if (!dataFile) throw std::runtime_error("cannot write " + dataPath);
  }
  onnx::ModelProto proto;
  Exporter ex(threshold, threshold > 0 ? &dataFile : nullptr, dataName);
  fillModel(model, proto, ex, options);
  if (dataFile.is_open()) {
    dataFile.close();
    if (!dataFile) throw std::runtime_error("writing external data failed for " + path);
  }
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw std::runtime_error("cannot write " + path);
  if (!proto.SerializeToOstream(&f)) throw std::runtime_error("serializing " + path + " failed");
}

}  // namespace kiln
