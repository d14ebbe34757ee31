#include "io/gedump/ge_dump_reader.h"

#include <google/protobuf/arena.h>
#include <google/protobuf/descriptor.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "io/lenient/lenient_fields.h"
#include "io/lenient/lenient_proto.h"
#include "io/om/ge_ir.pb.h"
#include "io/om/ge_model_builder.h"
#include "util/load_error.h"

namespace kiln::gedump {
namespace {

namespace fs = std::filesystem;
using ge::proto::AttrDef;
using ge::proto::OpDef;
using ge::proto::TensorDescriptor;

// ---- ge_onnx: ONNX text back into the ModelDef GE wrote it from ----

class OnnxDumpConverter {
 public:
  // `report`: the lenient parse of `model`, before anything read its map fields (ONNX has none).
  OnnxDumpConverter(ge::proto::ModelDef& md, const onnx::ModelProto& model, const lenient::ParseReport& report,
                    std::vector<std::string>& warnings)
      : md_(md), warnings_(warnings) {
    if (!report.extraCount) return;
    for (const lenient::LocatedExtra& e : lenient::locateExtras(model, report, "onnx.NodeProto")) {
      if (e.anchor) extras_[e.anchor].emplace_back(e.path, e.field->text);
      else (*md_.mutable_attr())["raw." + e.path].set_s(e.field->text);
    }
  }

  void convert(const onnx::ModelProto& model) {
    ge::proto::GraphDef& root = *md_.add_graph();
    convertGraph(model.graph(), root);
    linkSubgraphs();
  }

 private:
  void convertGraph(const onnx::GraphProto& g, ge::proto::GraphDef& out) {
    out.set_name(g.name());
    for (const onnx::NodeProto& node : g.node()) {
      if (node.op_type() == "subgraph") {
        for (const onnx::AttributeProto& a : node.attribute())
          if (a.has_g()) {
            // Added after the root; the reference into md_'s repeated field stays valid only until the next add,
            // so the subgraph is filled through its index.
            const int at = md_.graph_size();
            md_.add_graph();
            ge::proto::GraphDef tmp;
            convertGraph(a.g(), tmp);
            if (!node.name().empty()) tmp.set_name(node.name());
            md_.mutable_graph(at)->Swap(&tmp);
          }
        continue;
      }
      convertNode(node, *out.add_op());
    }
  }

  static std::optional<int> descIndex(std::string_view& field) {
    const size_t colon = field.rfind(':');
    if (colon == std::string_view::npos) return std::nullopt;
    int i = 0;
    const auto [p, ec] = std::from_chars(field.data() + colon + 1, field.data() + field.size(), i);
    if (ec != std::errc() || p != field.data() + field.size() || i < 0 || i > 100000) return std::nullopt;
    field = field.substr(0, colon);
    return i;
  }

  // An ONNX attribute's value as a GE attribute.
  void toAttrDef(const onnx::AttributeProto& a, AttrDef& out) {
    using A = onnx::AttributeProto;
    switch (a.type()) {
      case A::INT: out.set_i(a.i()); break;
      case A::FLOAT: out.set_f(a.f()); break;
      case A::STRING: out.set_s(a.s()); break;
      case A::INTS: {
        auto* l = out.mutable_list();
        for (int64_t v : a.ints()) l->add_i(v);
        l->set_val_type(AttrDef::ListValue::VT_LIST_INT);
        break;
      }
      case A::FLOATS: {
        auto* l = out.mutable_list();
        for (float v : a.floats()) l->add_f(v);
        l->set_val_type(AttrDef::ListValue::VT_LIST_FLOAT);
        break;
      }
      case A::STRINGS: {
        auto* l = out.mutable_list();
        for (const std::string& v : a.strings()) l->add_s(v);
        l->set_val_type(AttrDef::ListValue::VT_LIST_STRING);
        break;
      }
      case A::GRAPH: convertGraph(a.g(), *out.mutable_g()); break;
      default: out.set_s("<" + A::AttributeType_Name(a.type()) + " attribute>"); break;
    }
  }

  // An ONNX attribute as a scalar, for a field of GE's own messages.
  static std::vector<lenient::Scalar> scalars(const onnx::AttributeProto& a) {
    using A = onnx::AttributeProto;
    using K = lenient::Scalar::Kind;
    std::vector<lenient::Scalar> v;
    switch (a.type()) {
      case A::INT: v.push_back({K::Number, std::to_string(a.i())}); break;
      case A::FLOAT: v.push_back({K::Number, std::to_string(a.f())}); break;
      case A::STRING: v.push_back({K::String, a.s()}); break;
      case A::INTS:
        for (int64_t x : a.ints()) v.push_back({K::Number, std::to_string(x)});
        break;
      case A::STRINGS:
        for (const std::string& x : a.strings()) v.push_back({K::String, x});
        break;
      default: break;
    }
    return v;
  }

  // One descriptor field spelled as an attribute ("dtype", "shape", "origin_shape", "attr_<key>", ...).
  void setDescField(OpDef& op, const std::string& side, int index, TensorDescriptor& d, std::string_view field,
                    const onnx::AttributeProto& a) {
    auto& attrs = *d.mutable_attr();
    if (field.starts_with("attr_")) {
      toAttrDef(a, attrs[std::string(field.substr(5))]);
    } else if (field == "shape") {
      d.mutable_shape()->clear_dim();
      for (int64_t x : a.ints()) d.mutable_shape()->add_dim(x);
    } else if (field == "origin_shape") {
      toAttrDef(a, attrs["origin_shape"]);
    } else if (field == "origin_layout") {
      attrs["origin_format"].set_s(a.s());
    } else if (field == "origin_dtype") {
      attrs["origin_data_type"].set_s(a.s());
    } else {
      const auto* f = TensorDescriptor::descriptor()->FindFieldByName(std::string(field));
      bool stored = f && f->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE;
      if (stored)
        for (const lenient::Scalar& s : scalars(a)) stored = lenient::setScalar(d, *f, s, scratch_) && stored;
      if (!stored) {  // a field Kiln's schema does not know: shown as a raw attribute of the op
        AttrDef raw;
        toAttrDef(a, raw);
        (*op.mutable_attr())["raw." + side + "_desc[" + std::to_string(index) + "]." + std::string(field)] = raw;
      }
    }
  }

  static TensorDescriptor& descAt(google::protobuf::RepeatedPtrField<TensorDescriptor>& list, int i) {
    while (list.size() <= i) list.Add();
    return list[i];
  }

  void convertNode(const onnx::NodeProto& node, OpDef& op) {
    op.set_name(node.name());
    std::string type = node.op_type();
    if (const size_t colon = type.find(':'); colon != std::string::npos) type = type.substr(colon + 1);  // "ge:Conv2D"
    op.set_type(type);
    for (const std::string& in : node.input()) op.add_input(in);
    const auto* opDesc = OpDef::descriptor();
    for (const onnx::AttributeProto& a : node.attribute()) {
      std::string_view name = a.name();
      const bool in = name.starts_with("input_desc_"), out = name.starts_with("output_desc_");
      if (in || out) {
        std::string_view field = name.substr(in ? 11 : 12);
        if (field == "nums") continue;  // the count, which the descriptors themselves give
        if (const auto i = descIndex(field)) {
          auto& list = in ? *op.mutable_input_desc() : *op.mutable_output_desc();
          setDescField(op, in ? "input" : "output", *i, descAt(list, *i), field, a);
          continue;
        }
      }
      if (name.starts_with("value_desc_")) {  // a Const's value: its descriptor (the dump carries no data)
        TensorDescriptor& d = *(*op.mutable_attr())["value"].mutable_t()->mutable_desc();
        setDescField(op, "value", 0, d, name.substr(11), a);
        continue;
      }
      const auto* f = opDesc->FindFieldByName(std::string(name));
      const bool ownField = f && f->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE &&
                            name != "name" && name != "type" && name != "input";
      if (ownField) {
        bool stored = true;
        for (const lenient::Scalar& s : scalars(a)) stored = lenient::setScalar(op, *f, s, scratch_) && stored;
        if (stored) continue;
      }
      toAttrDef(a, (*op.mutable_attr())[a.name()]);
    }
    // Every output has a descriptor, even where the dump wrote no field of it.
    while (op.output_desc_size() < node.output_size()) op.add_output_desc();
    if (auto it = extras_.find(&node); it != extras_.end())
      for (const auto& [path, text] : it->second) (*op.mutable_attr())["raw." + path].set_s(text);
  }

  // GE's ONNX dump does not say which op calls a subgraph: the op named after it does (outside the subgraph itself;
  // where several are, the one op of a calling type).
  void linkSubgraphs() {
    std::set<std::string> referenced;
    for (const auto& g : md_.graph())
      for (const OpDef& op : g.op())
        for (const std::string& s : op.subgraph_name()) referenced.insert(s);
    auto calls = [](const std::string& type) {
      return type.find("Call") != std::string::npos || type == "If" || type == "StatelessIf" || type == "While" ||
             type == "StatelessWhile" || type == "Case" || type == "For";
    };
    for (int gi = 1; gi < md_.graph_size(); ++gi) {
      const std::string name = md_.graph(gi).name();
      if (referenced.count(name)) continue;
      std::vector<OpDef*> callers, calling;
      for (int gk = 0; gk < md_.graph_size(); ++gk) {
        if (gk == gi) continue;
        for (OpDef& op : *md_.mutable_graph(gk)->mutable_op())
          if (op.name().size() > name.size() + 1 && op.name().starts_with(name + "_")) {
            callers.push_back(&op);
            if (calls(op.type())) calling.push_back(&op);
          }
      }
      if (callers.size() != 1) callers = calling;
      if (callers.size() == 1) {
        callers.front()->add_subgraph_name(name);
      } else {
        warnings_.push_back("subgraph '" + name + "' is called by no op that GE named after it (" +
                            std::to_string(callers.size()) + " candidates): it is not drawn");
      }
    }
  }

  ge::proto::ModelDef& md_;
  std::vector<std::string>& warnings_;
  std::unordered_map<const google::protobuf::Message*, std::vector<std::pair<std::string, std::string>>> extras_;
  lenient::ParseReport scratch_;  // setScalar's counters for values converted here (none are foreign strings)
};

}  // namespace

TextKind sniffText(std::string_view head) {
  size_t i = 0;
  auto skip = [&] {
    for (;;) {
      while (i < head.size() && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t')) ++i;
      if (i < head.size() && head[i] == '#') {
        while (i < head.size() && head[i] != '\n') ++i;
        continue;
      }
      break;
    }
  };
  skip();
  if (i + 3 <= head.size() && static_cast<unsigned char>(head[i]) == 0xEF && head.substr(i, 3) == "\xEF\xBB\xBF") {
    i += 3;
    skip();
  }
  if (i >= head.size()) return TextKind::Unknown;
  if (head[i] == '{' || head[i] == '[') return TextKind::Json;
  size_t e = i;
  while (e < head.size() && ((head[e] >= 'a' && head[e] <= 'z') || (head[e] >= 'A' && head[e] <= 'Z') || head[e] == '_'))
    ++e;
  const std::string_view first = head.substr(i, e - i);
  size_t k = e;
  while (k < head.size() && (head[k] == ' ' || head[k] == '\t')) ++k;
  if (first.empty() || k >= head.size() || (head[k] != ':' && head[k] != '{')) return TextKind::Unknown;
  static const std::set<std::string_view> onnxFields = {"ir_version", "producer_name", "producer_version",
                                                        "opset_import", "model_version", "doc_string",
                                                        "metadata_props", "training_info", "functions"};
  if (onnxFields.count(first)) return TextKind::OnnxText;
  if (first == "graph") {
    // Both put the graph first; a GE graph holds `op { }`, an ONNX graph `node { }`.
    const size_t op = head.find("op {", k), node = head.find("node {", k);
    if (node != std::string_view::npos && (op == std::string_view::npos || node < op)) return TextKind::OnnxText;
    return TextKind::GeProto;
  }
  static const std::set<std::string_view> geFields = {"name", "version", "custom_version", "attr"};
  if (geFields.count(first)) return TextKind::GeProto;
  return TextKind::Unknown;
}

std::string readDumpText(const std::string& path) {
  std::error_code ec;
  const uintmax_t size = fs::file_size(path, ec);
  if (ec) throw LoadError(path, "cannot read: " + ec.message());
  if (size > kMaxDumpBytes)
    throw LoadError(path, std::to_string(size) + " bytes, larger than the 512 MiB Kiln reads of one text dump");
  std::ifstream in(path, std::ios::binary);
  std::string text(static_cast<size_t>(size), '\0');
  if (!in.read(text.data(), std::streamsize(size))) throw LoadError(path, "cannot read");
  return text;
}

std::unique_ptr<Model> readGeProtoDump(std::string_view text, const std::string& displayName,
                                       std::vector<std::string>& warnings) {
  google::protobuf::Arena arena;
  auto& md = *google::protobuf::Arena::CreateMessage<ge::proto::ModelDef>(&arena);
  lenient::ParseReport report;
  lenient::parseText(text, md, displayName, report);
  if (md.graph_size() == 0) throw LoadError(displayName, "holds no graph: not a GE graph dump (ge.proto.ModelDef text)");
  auto m = om::buildGeTextModel(md, displayName, &report, warnings);
  m->producerName = "GE";
  m->producerVersion = "graph dump";
  return m;
}

std::unique_ptr<Model> readGeOnnxDump(std::string_view text, const std::string& displayName,
                                      std::vector<std::string>& warnings) {
  google::protobuf::Arena arena;
  auto& onnxModel = *google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&arena);
  lenient::ParseReport report;
  lenient::parseText(text, onnxModel, displayName, report);
  if (!onnxModel.has_graph() || onnxModel.graph().node_size() == 0)
    throw LoadError(displayName, "holds no graph nodes: not a GE ONNX-text dump");
  auto& md = *google::protobuf::Arena::CreateMessage<ge::proto::ModelDef>(&arena);
  md.set_name(onnxModel.graph().name());
  OnnxDumpConverter(md, onnxModel, report, warnings).convert(onnxModel);
  auto m = om::buildGeTextModel(md, displayName, nullptr, warnings);
  if (std::string s = lenient::summarize(report); !s.empty()) warnings.push_back(s);
  m->producerName = onnxModel.producer_name().empty() ? "GE" : onnxModel.producer_name();
  m->producerVersion = "graph dump (ONNX text)";
  return m;
}

}  // namespace kiln::gedump
