#include "io/om/om_reader.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <charconv>
#include <climits>
#include <unordered_set>
#include <map>
#include <unordered_map>

#include "io/om/ge_ir.pb.h"
#include "io/om/ge_types.h"
#include "io/om/om_plan.h"
#include "ir/model_metadata.h"
#include "io/om/task.pb.h"
#include "schedule/task_list.h"

namespace kiln::om {
namespace {

// MODEL_INOUT_INFO's gear records as ATC's option text ("1,2,4,8", "224,224;448,448"); "" for other records or
// bytes that do not hold a well-formed list (the file is untrusted: never read past the record).
std::string gearListText(const OmTlvRecord& r) {
  if (r.type < 2 || r.type > 4) return {};
  const std::string& b = r.value;
  size_t at = 0;
  auto u32 = [&](uint32_t& v) {
    if (at + 4 > b.size()) return false;
    std::memcpy(&v, b.data() + at, 4);
    at += 4;
    return true;
  };
  auto i64 = [&](int64_t& v) {
    if (at + 8 > b.size()) return false;
    std::memcpy(&v, b.data() + at, 8);
    at += 8;
    return true;
  };
  uint32_t count = 0;
  if (!u32(count) || count > 1000) return {};
  std::string text;
  if (r.type == 2) {
    for (uint32_t i = 0; i < count; ++i) {
      int64_t v = 0;
      if (!i64(v)) return {};
      text += (i ? "," : "") + std::to_string(v);
    }
    return at == b.size() ? text : std::string();
  }
  std::vector<uint32_t> lengths(count);
  for (uint32_t& l : lengths)
    if (!u32(l) || l > 1000) return {};
  for (uint32_t i = 0; i < count; ++i) {
    text += i ? ";" : "";
    for (uint32_t k = 0; k < lengths[i]; ++k) {
      int64_t v = 0;
      if (!i64(v)) return {};
      text += (k ? "," : "") + std::to_string(v);
    }
  }
  return at == b.size() ? text : std::string();
}


constexpr int kMaxSubgraphDepth = 64;
constexpr size_t kMaxInlineBytesAttr = 4096;  // longer bytes attributes are shown as "<N bytes>"

std::string joinInts(const google::protobuf::RepeatedField<int64_t>& v) {
  std::string s;
  for (int64_t x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

template <typename Message>
bool parseBounded(Message& msg, std::span<const uint8_t> bytes) {
  if (bytes.size() > INT_MAX) return false;
  google::protobuf::io::ArrayInputStream raw(bytes.data(), static_cast<int>(bytes.size()));
  google::protobuf::io::CodedInputStream coded(&raw);
  coded.SetTotalBytesLimit(static_cast<int>(bytes.size()));
  // A bad file is reported as a LoadError; libprotobuf's own log lines (invalid UTF-8 in a proto3 string...) would
  // only repeat it on stderr.
  google::protobuf::LogSilencer quiet;
  return msg.ParseFromCodedStream(&coded) && coded.ConsumedEntireMessage();
}

// Builds the IR from the parsed protobuf. Every problem in the file throws LoadError naming the op and graph.
class Builder {
 public:
  Builder(Model& m, const std::string& file, std::shared_ptr<const Storage> storage, const OmPartition* weights,
          std::vector<std::string>& warnings)
      : m_(m), file_(file), storage_(std::move(storage)), warnings_(warnings) {
    if (weights) {
      weightsOffset_ = weights->offset;
      weightsSize_ = weights->size;
      hasWeights_ = true;
    }
  }

  void build(const ge::proto::ModelDef& md) {
    if (md.graph_size() == 0) fail("MODEL_DEF holds no graph");
    for (int i = 1; i < md.graph_size(); ++i) subgraphDefs_.emplace(md.graph(i).name(), &md.graph(i));
    m_.graph->setName(md.graph(0).name());
    buildGraph(md.graph(0), *m_.graph, 0);
  }

  // Op id (OpDef.id) -> node, for linking tasks.
  const std::unordered_map<int64_t, Node*>& nodesById() const { return byId_; }
  const std::unordered_map<std::string, Node*>& nodesByName() const { return byName_; }

 private:
  [[noreturn]] void fail(const std::string& problem) const { throw LoadError(file_, problem); }
  void warn(std::string w) { warnings_.push_back(std::move(w)); }

  // A node on a cycle once the edges leaving NextIteration ops are ignored (Kahn's algorithm), or nullptr.
  static const Node* cycleWithoutNextIteration(const Graph& g) {
    auto closesLoop = [](const Node* p) { return p && (p->opType() == "NextIteration" || p->opType() == "RefNextIteration"); };
    std::unordered_map<const Node*, size_t> pending;
    std::unordered_map<const Node*, std::vector<const Node*>> readers;
    for (const Node* n : g.nodes()) {
      size_t count = 0;
      for (const Value* v : n->inputs())
        if (v && v->producer() && v->producer()->graph() == &g && !closesLoop(v->producer())) {
          ++count;
          readers[v->producer()].push_back(n);
        }
      pending[n] = count;
    }
    std::vector<const Node*> ready;
    for (const auto& [n, c] : pending)
      if (c == 0) ready.push_back(n);
    size_t done = 0;
    while (!ready.empty()) {
      const Node* n = ready.back();
      ready.pop_back();
      ++done;
      for (const Node* r : readers[n])
        if (--pending[r] == 0) ready.push_back(r);
    }
    if (done == pending.size()) return nullptr;
    // Walk back from a node left over through producers also left over: the first node seen twice is on a cycle.
    const Node* n = nullptr;
    for (const Node* c : g.nodes())
      if (pending[c] > 0) n = c;
    std::unordered_set<const Node*> seen;
    while (n && seen.insert(n).second) {
      const Node* next = nullptr;
      for (const Value* v : n->inputs())
        if (v && v->producer() && v->producer()->graph() == &g && !closesLoop(v->producer()) &&
            pending[v->producer()] > 0)
          next = v->producer();
      n = next;
    }
    return n;
  }

  static std::string opLabel(const ge::proto::OpDef& op, const Graph& g) {
    return "op '" + op.name() + "' (" + op.type() + ") of graph '" + g.name() + "'";
  }

  Shape shapeOf(const ge::proto::TensorDescriptor& d, const std::string& where) const {
    const auto& dims = d.shape().dim();
    if (dims.size() == 1 && dims[0] == -2) return Shape::unknownRank();
    std::vector<Dim> out;
    out.reserve(static_cast<size_t>(dims.size()));
    for (int64_t x : dims) {
      if (x == -1) {
        out.push_back(Dim::unknown());
      } else if (x < 0) {
        fail(where + ": invalid dimension " + std::to_string(x) + " (only -1, an unknown dim, may be negative)");
      } else {
        out.push_back(Dim::fixed(x));
      }
    }
    int64_t product = 1;
    for (int64_t x : dims)
      if (x > 0 && __builtin_mul_overflow(product, x, &product))
        fail(where + ": dimensions whose product overflows int64");
    return Shape(std::move(out));
  }

  // The value type a descriptor records; `layoutOut` receives the layout string when Kiln has no Format for it.
  ValueType typeOf(const ge::proto::TensorDescriptor& d, const std::string& where, std::string* layoutOut) {
    const auto dt = dtypeFromGeProto(d.dtype());
    if (!dt) warn(where + ": unknown GE data type " + std::to_string(d.dtype()) + ", shown as undefined");
    Format f = Format::ND;
    if (!d.layout().empty()) {
      if (auto known = formatFromName(d.layout()))
        f = *known;
      else if (layoutOut)
        *layoutOut = d.layout();
    }
    ValueType t = ValueType::tensor(dt.value_or(DType::Undefined), shapeOf(d, where), f);
    // A blocked layout's logical shape and layout (GE's origin_shape / origin_format), which its padding hides.
    auto shapeAttr = d.attr().find("origin_shape");
    auto formatAttr = d.attr().find("origin_format");
    if (isBlockedFormat(f) && shapeAttr != d.attr().end() && shapeAttr->second.has_list() &&
        formatAttr != d.attr().end() && formatAttr->second.value_case() == ge::proto::AttrDef::kS)
      if (auto of = formatFromName(formatAttr->second.s())) {
        ge::proto::TensorDescriptor origin;
        for (int64_t x : shapeAttr->second.list().i()) origin.mutable_shape()->add_dim(x);
        t.originShape = shapeOf(origin, where + " origin_shape");
        t.originFormat = *of;
      }
    return t;
  }

  // Origin format/shape of a descriptor (GE records the logical layout a physical tensor came from).
  void annotateDescriptor(Node& n, size_t i, const ge::proto::TensorDescriptor& d, const std::string& layout) {
    const std::string key = "om.output" + std::to_string(i) + ".";
    if (auto it = d.attr().find("origin_format"); it != d.attr().end() && it->second.value_case() == ge::proto::AttrDef::kS)
      n.setAnnotation(key + "origin_format", it->second.s());
    if (auto it = d.attr().find("origin_shape"); it != d.attr().end() && it->second.has_list())
      n.setAnnotation(key + "origin_shape", joinInts(it->second.list().i()));
    if (!layout.empty()) n.setAnnotation(key + "layout", layout);
  }

  // "src:idx" -> (src, idx). Throws on a malformed reference.
  std::pair<std::string, int64_t> splitRef(const std::string& ref, const std::string& where) const {
    const auto colon = ref.rfind(':');
    if (colon == std::string::npos || colon == 0)
      fail(where + ": input '" + ref + "' is not of the form \"op:index\"");
    int64_t idx = 0;
    const char* b = ref.data() + colon + 1;
    const char* e = ref.data() + ref.size();
    auto [p, ec] = std::from_chars(b, e, idx);
    if (ec != std::errc() || p != e || b == e)
      fail(where + ": input '" + ref + "' has no valid output index after ':'");
    return {ref.substr(0, colon), idx};
  }

  std::optional<Attribute> convertAttr(const ge::proto::AttrDef& a, Graph& g, int depth, const std::string& where) {
    using A = ge::proto::AttrDef;
    auto bytesText = [](const std::string& s) {
      return s.size() <= kMaxInlineBytesAttr ? s : "<" + std::to_string(s.size()) + " bytes>";
    };
    switch (a.value_case()) {
      case A::kS: return Attribute(a.s());
      case A::kI: return Attribute(a.i());
      case A::kF: return Attribute(a.f());
      case A::kB: return Attribute(static_cast<int64_t>(a.b()));
      case A::kBt: return Attribute(bytesText(a.bt()));
      case A::kDt: return Attribute(a.dt());
      case A::kTd: return Attribute(typeOf(a.td(), where, nullptr));
      case A::kT: return Attribute(typeOf(a.t().desc(), where, nullptr));  // inline tensors: their type only
      case A::kFunc: return Attribute(std::string("func ") + a.func().name());
      case A::kG: return Attribute(buildSubgraph(a.g(), g, depth, where));
      case A::kListListInt: {
        std::vector<std::string> rows;
        for (const auto& row : a.list_list_int().list_list_i()) rows.push_back(joinInts(row.list_i()));
        return Attribute(std::move(rows));
      }
      case A::kList: {
        const auto& l = a.list();
        if (l.s_size()) return Attribute(std::vector<std::string>(l.s().begin(), l.s().end()));
        if (l.i_size()) return Attribute(std::vector<int64_t>(l.i().begin(), l.i().end()));
        if (l.f_size()) return Attribute(std::vector<float>(l.f().begin(), l.f().end()));
        if (l.b_size()) return Attribute(std::vector<int64_t>(l.b().begin(), l.b().end()));
        if (l.dt_size()) return Attribute(std::vector<int64_t>(l.dt().begin(), l.dt().end()));
        if (l.bt_size()) {
          std::vector<std::string> v;
          for (const auto& s : l.bt()) v.push_back(bytesText(s));
          return Attribute(std::move(v));
        }
        if (l.na_size()) {
          std::vector<std::string> v;
          for (const auto& na : l.na()) v.push_back("func " + na.name());
          return Attribute(std::move(v));
        }
        if (l.td_size() || l.t_size()) {
          std::vector<ValueType> v;
          for (const auto& td : l.td()) v.push_back(typeOf(td, where, nullptr));
          for (const auto& t : l.t()) v.push_back(typeOf(t.desc(), where, nullptr));
          return Attribute(std::move(v));
        }
        if (l.g_size()) {
          std::vector<Attribute::GraphPtr> gs;
          for (const auto& sub : l.g()) gs.push_back(buildSubgraph(sub, g, depth, where));
          return Attribute(std::move(gs));
        }
        using LV = A::ListValue;
        switch (l.val_type()) {  // an empty list keeps its declared element type where Kiln has one
          case LV::VT_LIST_STRING:
          case LV::VT_LIST_BYTES: return Attribute(std::vector<std::string>{});
          case LV::VT_LIST_FLOAT: return Attribute(std::vector<float>{});
          default: return Attribute(std::vector<int64_t>{});
        }
      }
      case A::VALUE_NOT_SET: return std::nullopt;
    }
    return std::nullopt;
  }

  Attribute::GraphPtr buildSubgraph(const ge::proto::GraphDef& gd, Graph& parent, int depth, const std::string& where) {
    if (depth + 1 > kMaxSubgraphDepth)
      fail(where + ": subgraphs nested deeper than " + std::to_string(kMaxSubgraphDepth) + " levels");
    auto sub = parent.makeSubgraph(gd.name());
    buildGraph(gd, *sub, depth + 1);
    return sub;
  }

  // A Const's weights: a slice of WEIGHTS_DATA (data_offset/weight_size of its `value` tensor, else of its output
  // descriptor), or inline bytes. Null when the op carries no data at all.
  std::optional<Tensor> constWeights(const ge::proto::OpDef& op, const Graph& g) {
    const std::string where = opLabel(op, g);
    const ge::proto::TensorDef* t = nullptr;
    if (auto it = op.attr().find("value"); it != op.attr().end() && it->second.value_case() == ge::proto::AttrDef::kT)
      t = &it->second.t();
    const ge::proto::TensorDescriptor* desc =
        t && t->has_desc() ? &t->desc() : (op.output_desc_size() ? &op.output_desc(0) : nullptr);
    if (!desc) return std::nullopt;
    const auto dt = dtypeFromGeProto(desc->dtype());
    const Shape shape = shapeOf(*desc, where + " weights");
    const auto extents = shape.staticExtents();
    if (!extents) fail(where + ": a constant's shape must be static, got " + shape.toString());
    if (!dt || dtypeSize(*dt) == 0) {
      warn(where + ": constant of GE data type " + std::to_string(desc->dtype()) + " not loaded");
      return std::nullopt;
    }
    const auto numel = checkedProduct(*extents);
    const auto bytes = numel ? checkedMul(*numel, dtypeSize(*dt)) : std::nullopt;
    if (!bytes) fail(where + ": the constant's size overflows (" + shape.toString() + ")");
    const uint64_t need = static_cast<uint64_t>(*bytes);
    if (t && !t->data().empty()) {
      if (t->data().size() != need)
        fail(where + ": inline constant holds " + std::to_string(t->data().size()) + " bytes, its type " +
             ValueType::tensor(*dt, shape).toString() + " needs " + std::to_string(need));
      return Tensor::fromBytes(*dt, *extents, t->data());
    }
    // A graph dump has no weights partition: its constants keep their type only.
    if (!storage_) return std::nullopt;
    // Offsets from the `value` tensor's descriptor, falling back to the output descriptor's.
    const ge::proto::TensorDescriptor* at = desc;
    if (at->weight_size() == 0 && at->data_offset() == 0 && op.output_desc_size()) at = &op.output_desc(0);
    if (need == 0) return Tensor(*dt, *extents, storage_, 0);
    if (at->weight_size() == 0 && at->data_offset() == 0) {
      warn(where + ": constant carries no weight data");
      return std::nullopt;
    }
    if (at->data_offset() < 0 || at->weight_size() < 0)
      fail(where + ": negative data_offset " + std::to_string(at->data_offset()) + " or weight_size " +
           std::to_string(at->weight_size()));
    if (static_cast<uint64_t>(at->weight_size()) < need)
      fail(where + ": weight_size " + std::to_string(at->weight_size()) + " is smaller than the " + std::to_string(need) +
           " bytes of " + ValueType::tensor(*dt, shape).toString());
    const uint64_t off = static_cast<uint64_t>(at->data_offset());
    if (!hasWeights_) fail(where + ": refers to weights at offset " + std::to_string(off) + " but the file has no WEIGHTS_DATA");
    if (off > weightsSize_ || need > weightsSize_ - off)
      fail(where + ": data_offset " + std::to_string(off) + " + " + std::to_string(need) +
           " bytes lies past the end of WEIGHTS_DATA (" + std::to_string(weightsSize_) + " bytes)");
    return Tensor(*dt, *extents, storage_, static_cast<size_t>(weightsOffset_ + off));
  }

  void buildGraph(const ge::proto::GraphDef& gd, Graph& g, int depth) {
    std::unordered_map<std::string, Node*> local;
    std::vector<std::pair<const ge::proto::OpDef*, Node*>> made;
    made.reserve(static_cast<size_t>(gd.op_size()));
    struct DataOp {
      int64_t index;  // the op's "index" attribute, else its position among the Data ops
      Node* node;
      ValueType type;
    };
    std::vector<DataOp> dataOps;  // Data ops reading a graph input
    std::vector<Node*> netOutputs;

    // Pass 1: every op with its output values, so inputs may refer to ops listed later.
    for (const auto& op : gd.op()) {
      const std::string where = opLabel(op, g);
      if (op.name().empty()) fail("an op of type '" + op.type() + "' in graph '" + g.name() + "' has no name");
      if (local.count(op.name())) fail("graph '" + g.name() + "' has two ops named '" + op.name() + "'");
      size_t dataSlots = 0;
      for (const auto& in : op.input())
        if (in.empty() || !in.ends_with(":-1")) ++dataSlots;
      const bool isNetOutput = op.type() == "NetOutput";
      const size_t nOut = isNetOutput ? dataSlots : static_cast<size_t>(op.output_desc_size());
      std::vector<std::string> names;
      for (size_t i = 0; i < nOut; ++i) names.push_back(op.name() + ":" + std::to_string(i));
      Node* n = g.addNode(op.type(), {}, names, op.name(), kGeDomain);
      local.emplace(op.name(), n);
      made.emplace_back(&op, n);
      for (size_t i = 0; i < nOut; ++i) {
        const bool fromOut = static_cast<int>(i) < op.output_desc_size();
        const auto* d = fromOut ? &op.output_desc(static_cast<int>(i))
                        : static_cast<int>(i) < op.input_desc_size() ? &op.input_desc(static_cast<int>(i)) : nullptr;
        if (!d) continue;
        std::string layout;
        n->output(i)->setType(typeOf(*d, where + " output " + std::to_string(i), &layout));
        annotateDescriptor(*n, i, *d, layout);
      }
      if (isNetOutput) netOutputs.push_back(n);
      const auto emptySlots = static_cast<size_t>(std::count(op.input().begin(), op.input().end(), std::string()));
      if (op.type() == "Data" && dataSlots == emptySlots) {
        const auto* d = op.input_desc_size() ? &op.input_desc(0) : op.output_desc_size() ? &op.output_desc(0) : nullptr;
        int64_t index = static_cast<int64_t>(dataOps.size());
        if (auto it = op.attr().find("index"); it != op.attr().end() && it->second.value_case() == ge::proto::AttrDef::kI)
          index = it->second.i();
        dataOps.push_back({index, n, d ? typeOf(*d, where + " input", nullptr) : ValueType{}});
      }
    }
    // Graph inputs in Data index order, each named after its Data op.
    std::stable_sort(dataOps.begin(), dataOps.end(), [](const auto& a, const auto& b) { return a.index < b.index; });
    std::unordered_map<const Node*, Value*> dataInput;
    for (auto& d : dataOps) dataInput.emplace(d.node, g.addInput(d.node->name(), std::move(d.type)));

    // Pass 2: edges, attributes, weights and annotations.
    for (auto [opp, n] : made) {
      const auto& op = *opp;
      const std::string where = opLabel(op, g);
      std::vector<Value*> inputs;
      std::string control;
      for (int j = 0; j < op.input_size(); ++j) {
        const std::string& ref = op.input(j);
        if (ref.empty()) {
          inputs.push_back(nullptr);
          continue;
        }
        auto [src, idx] = splitRef(ref, where);
        auto it = local.find(src);
        if (it == local.end())
          fail(where + ": input " + std::to_string(j) + " '" + ref + "' names '" + src + "', which is not an op of the graph");
        if (idx == -1) {
          control += (control.empty() ? "" : ",") + src;
          continue;
        }
        if (idx < 0 || static_cast<uint64_t>(idx) >= it->second->numOutputs())
          fail(where + ": input " + std::to_string(j) + " '" + ref + "' reads output " + std::to_string(idx) + " of '" +
               src + "', which has " + std::to_string(it->second->numOutputs()) + " outputs");
        inputs.push_back(it->second->output(static_cast<size_t>(idx)));
      }
      if (auto it = dataInput.find(n); it != dataInput.end()) inputs.assign(1, it->second);
      g.setNodeInputs(n, inputs);
      if (!control.empty()) n->setAnnotation("om.control_inputs", control);

      std::vector<std::pair<std::string, const ge::proto::AttrDef*>> attrs;
      for (const auto& [k, v] : op.attr()) attrs.emplace_back(k, &v);
      std::sort(attrs.begin(), attrs.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      const bool isConst = op.type() == "Const" || op.type() == "Constant";
      for (const auto& [k, v] : attrs) {
        if (isConst && k == "value") continue;
        if (auto a = convertAttr(*v, g, depth, where + " attribute '" + k + "'")) n->setAttr(k, std::move(*a));
      }
      if (isConst)
        if (auto w = constWeights(op, g)) n->setAttr("value", Attribute(std::move(*w)));

      if (op.subgraph_name_size()) {
        // Kiln's own files name the attribute each subgraph came from (a fused node's "body"...); GE's list them
        // in order only, kept as "subgraphs".
        std::vector<std::string> attrOf;
        if (auto it = op.attr().find("_kiln.subgraph_attrs");
            it != op.attr().end() && it->second.has_list() && it->second.list().s_size() == op.subgraph_name_size())
          attrOf.assign(it->second.list().s().begin(), it->second.list().s().end());
        n->removeAttr("_kiln.subgraph_attrs");
        std::vector<std::pair<std::string, std::vector<Attribute::GraphPtr>>> subs;  // attribute -> its graphs
        for (int k = 0; k < op.subgraph_name_size(); ++k) {
          const std::string& name = op.subgraph_name(k);
          auto it = subgraphDefs_.find(name);
          if (it == subgraphDefs_.end()) {
            warn(where + ": subgraph '" + name + "' is not in the model");
            continue;
          }
          const std::string attr = attrOf.empty() ? "subgraphs" : attrOf[size_t(k)];
          if (subs.empty() || subs.back().first != attr) subs.emplace_back(attr, std::vector<Attribute::GraphPtr>{});
          subs.back().second.push_back(buildSubgraph(*it->second, g, depth, where));
        }
        for (auto& [attr, graphs] : subs) {
          if (attr == "subgraphs" || graphs.size() > 1) n->setAttr(attr, Attribute(std::move(graphs)));
          else n->setAttr(attr, Attribute(std::move(graphs.front())));
        }
      }

      n->setAnnotation("om.id", std::to_string(op.id()));
      n->setAnnotation("om.stream_id", std::to_string(op.stream_id()));
      if (op.input_i_size()) n->setAnnotation("om.input_offsets", joinInts(op.input_i()));
      if (op.output_i_size()) n->setAnnotation("om.output_offsets", joinInts(op.output_i()));
      if (op.workspace_size()) n->setAnnotation("om.workspace", joinInts(op.workspace()));
      if (op.workspace_bytes_size()) n->setAnnotation("om.workspace_bytes", joinInts(op.workspace_bytes()));
      if (auto it = op.attr().find("tvm_blockdim"); it != op.attr().end() && it->second.value_case() == ge::proto::AttrDef::kI)
        n->setAnnotation("om.block_dim", std::to_string(it->second.i()));
      byId_.emplace(op.id(), n);
      byName_.emplace(op.name(), n);
    }

    // The graph's outputs are NetOutput's.
    std::vector<Value*> outs;
    for (Node* n : netOutputs)
      for (Value* v : n->outputs()) outs.push_back(v);
    if (outs.empty() && g.parent() == nullptr) warn("graph '" + g.name() + "' has no NetOutput: the model shows no outputs");
    g.setOutputs(outs);
    if (!g.sortTopologically()) {
      // GE keeps TensorFlow's v1 loops (Enter/Merge/Switch/NextIteration) as cycles closed by NextIteration: those
      // stay (with a warning); any other cycle is a corrupt graph.
      if (const Node* n = cycleWithoutNextIteration(g))
        fail("graph '" + g.name() + "' contains a cycle that no NextIteration closes (through op '" + n->name() + "' (" +
             n->opType() + "))");
      warn("graph '" + g.name() + "' contains a cycle");
    }
  }

  Model& m_;
  const std::string& file_;
  std::shared_ptr<const Storage> storage_;
  std::vector<std::string>& warnings_;
  uint64_t weightsOffset_ = 0, weightsSize_ = 0;
  bool hasWeights_ = false;
  std::unordered_map<std::string, const ge::proto::GraphDef*> subgraphDefs_;
  std::unordered_map<int64_t, Node*> byId_;
  std::unordered_map<std::string, Node*> byName_;
};

// Scalar model attributes as metadata ("om.<key>"); lists and long bytes are left out.
void addModelMetadata(Model& m, const ge::proto::ModelDef& md) {
  std::vector<std::pair<std::string, std::string>> meta;
  for (const auto& [k, v] : md.attr()) {
    switch (v.value_case()) {
      case ge::proto::AttrDef::kI: meta.emplace_back("om." + k, std::to_string(v.i())); break;
      case ge::proto::AttrDef::kB: meta.emplace_back("om." + k, v.b() ? "true" : "false"); break;
      case ge::proto::AttrDef::kF: meta.emplace_back("om." + k, std::to_string(v.f())); break;
      case ge::proto::AttrDef::kS:
        if (v.s().size() <= 256) meta.emplace_back("om." + k, v.s());
        break;
      default: break;
    }
  }
  std::sort(meta.begin(), meta.end());
  m.metadata.insert(m.metadata.end(), meta.begin(), meta.end());
}

// TBE_KERNELS / CUST_AICPU_KERNELS / SO_BINS: {u32 magic, u32 name_len, u32 bin_len, name, bin}*.
std::vector<OmKernelBinary> parseKernelBins(std::span<const uint8_t> b, std::vector<std::string>& warnings) {
  std::vector<OmKernelBinary> out;
  uint64_t pos = 0;
  auto u32 = [&](uint64_t at) {
    return static_cast<uint32_t>(b[at]) | static_cast<uint32_t>(b[at + 1]) << 8 | static_cast<uint32_t>(b[at + 2]) << 16 |
           static_cast<uint32_t>(b[at + 3]) << 24;
  };
  while (pos < b.size()) {
    if (b.size() - pos < 12 || u32(pos) != 0x5D776EFD) {
      warnings.push_back("TBE_KERNELS: malformed kernel record at offset " + std::to_string(pos) + "; the rest is ignored");
      break;
    }
    const uint64_t nameLen = u32(pos + 4), binLen = u32(pos + 8);
    if (nameLen + binLen > b.size() - pos - 12) {
      warnings.push_back("TBE_KERNELS: kernel record at offset " + std::to_string(pos) + " runs past the partition");
      break;
    }
    out.push_back({std::string(reinterpret_cast<const char*>(b.data() + pos + 12), nameLen), binLen});
    pos += 12 + nameLen + binLen;
  }
  return out;
}

}  // namespace

OmImport readOmBytes(std::shared_ptr<const Storage> storage, const std::string& displayName, size_t modelIndex) {
  if (!storage || storage->size() == 0) throw LoadError(displayName, "file is empty");
  const std::span<const uint8_t> file(storage->data(), storage->size());
  OmImport out;
  OmModelInfo& info = out.info;
  info.container = parseOmContainer(file, displayName);
  out.warnings = info.container.warnings;
  const size_t count = info.container.models.size();
  const std::string last = "#" + std::to_string(count - 1);
  if (modelIndex >= count)
    throw LoadError(displayName, "the file holds " + std::to_string(count) + (count == 1 ? " model" : " models") +
                                     " (#0.." + last + "): there is no model #" + std::to_string(modelIndex));
  const OmModelPartitions& root = info.container.models[modelIndex];
  if (count > 1)
    out.warnings.push_back("the file holds " + std::to_string(count) + " models; this is model #" +
                           std::to_string(modelIndex) + (modelIndex == 0 ? " (the root)" : "") +
                           ": add #0.." + last + " to the file's path to open another");

  const OmPartition* modelDef = root.find(PartitionType::ModelDef);
  if (!modelDef) throw LoadError(displayName, "no MODEL_DEF partition: the file holds no graph");
  google::protobuf::Arena arena;
  auto& md = *google::protobuf::Arena::CreateMessage<ge::proto::ModelDef>(&arena);
  if (!parseBounded(md, partitionBytes(file, *modelDef)))
    throw LoadError(displayName, "MODEL_DEF partition is not a valid ge.proto.ModelDef (protobuf parse failed)");

  auto& tasks = *google::protobuf::Arena::CreateMessage<domi::ModelTaskDef>(&arena);
  if (const OmPartition* ti = root.find(PartitionType::TaskInfo))
    if (!parseBounded(tasks, partitionBytes(file, *ti)))
      throw LoadError(displayName, "TASK_INFO partition is not a valid domi.ModelTaskDef (protobuf parse failed)");

  // The model's own MODEL_INOUT_INFO, else the first a model of the file carries (GE writes it once).
  const OmPartition* io = root.find(PartitionType::ModelInOutInfo);
  for (size_t k = 0; !io && k < count; ++k) io = info.container.models[k].find(PartitionType::ModelInOutInfo);
  if (io) info.inOut = parseInOutInfo(partitionBytes(file, *io), displayName);
  if (const OmPartition* k = root.find(PartitionType::TbeKernels))
    info.kernels = parseKernelBins(partitionBytes(file, *k), out.warnings);
  const OmPartition* weights = root.find(PartitionType::WeightsData);
  info.weightsBytes = weights ? weights->size : 0;

  out.model = std::make_unique<Model>();
  Model& m = *out.model;
  m.sourcePath = displayName;
  m.opsets = {{"", 17}, {kGeDomain, 1}};
  m.modelVersion = md.version();
  const OmHeader& h = info.container.header;
  m.metadata.emplace_back("om.header_version", h.isV1() ? "1" : "2");
  if (!h.name.empty()) m.metadata.emplace_back("om.name", h.name);
  if (!h.platformVersion.empty()) m.metadata.emplace_back("om.platform_version", h.platformVersion);
  m.metadata.emplace_back("om.model_type", std::to_string(h.modelType));
  if (count > 1) {
    m.metadata.emplace_back("om.model_count", std::to_string(count));
    m.metadata.emplace_back("om.model_index", std::to_string(modelIndex));
  }
  if (h.isUnknownModel) m.metadata.emplace_back("om.dynamic_shape", "true");
  for (const OmTlvRecord& r : info.inOut ? info.inOut->others : std::vector<OmTlvRecord>{})
    if (std::string gears = gearListText(r); !gears.empty())
      m.metadata.emplace_back(r.type == 2 ? "om.dynamic_batch" : r.type == 3 ? "om.dynamic_hw" : "om.dynamic_dims", gears);
  addModelMetadata(m, md);
  // The task list's own totals where the model attributes do not give them.
  auto fill = [&](const char* key, uint64_t v) {
    if (v && metadataValue(m, key).empty()) m.metadata.emplace_back(key, std::to_string(v));
  };
  fill("om.memory_size", tasks.memory_size());
  fill("om.weight_size", tasks.weight_size());
  fill("om.stream_num", tasks.stream_num());
  fill("om.event_num", tasks.event_num());
  fill("om.task_num", static_cast<uint64_t>(tasks.task_size()));
  info.memorySize = metadataU64(m, "om.memory_size");
  info.weightSize = metadataU64(m, "om.weight_size");
  info.streamNum = static_cast<uint32_t>(metadataU64(m, "om.stream_num"));
  info.eventNum = static_cast<uint32_t>(metadataU64(m, "om.event_num"));
  info.socVersion = metadataValue(m, "om.soc_version");
  if (const std::string atc = metadataValue(m, "om.atc_version"); !atc.empty()) {
    m.producerName = "ATC";
    m.producerVersion = atc;
  } else {
    m.producerName = "Ascend offline model";
  }

  try {
    Builder b(m, displayName, storage, weights, out.warnings);
    b.build(md);
    // Tasks, linked to their ops by KernelContext.op_index = OpDef.id.
    for (int i = 0; i < tasks.task_size(); ++i) {
      const auto& t = tasks.task(i);
      OmTask ot;
      ot.index = static_cast<size_t>(i);
      ot.id = t.id();
      ot.type = t.type();
      ot.streamId = t.stream_id();
      ot.eventId = t.event_id();
      ot.labelId = t.label_id();
      if (t.has_kernel()) {
        ot.kernelName = t.kernel().kernel_name();
        ot.stubFunc = t.kernel().stub_func();
        ot.blockDim = t.kernel().block_dim();
        if (t.kernel().has_context()) {
          ot.kernelType = t.kernel().context().kernel_type();
          ot.opIndex = t.kernel().context().op_index();
        }
      }
      if (ot.opIndex >= 0) {
        if (auto it = b.nodesById().find(ot.opIndex); it != b.nodesById().end()) {
          Node* n = it->second;
          ot.opName = n->name();
          const std::string prev = n->annotation("om.task");
          n->setAnnotation("om.task", prev.empty() ? taskTypeName(ot.type) + " #" + std::to_string(i)
                                                   : prev + ", " + taskTypeName(ot.type) + " #" + std::to_string(i));
          if (ot.blockDim) n->setAnnotation("om.block_dim", std::to_string(ot.blockDim));
          if (!ot.kernelName.empty()) n->setAnnotation("om.kernel_name", ot.kernelName);
        } else {
          out.warnings.push_back("task " + std::to_string(i) + " runs op index " + std::to_string(ot.opIndex) +
                                 ", which is not an op of the graph");
        }
      }
      info.tasks.push_back(std::move(ot));
    }
    for (const auto& k : info.kernels)
      if (auto it = b.nodesByName().find(k.name); it != b.nodesByName().end())
        it->second->setAnnotation("om.kernel_bin_bytes", std::to_string(k.size));
    annotateOmPlan(m, info.tasks);
    m.precompiled = true;
  } catch (const LoadError&) {
    throw;
  } catch (const std::exception& e) {
    throw LoadError(displayName, e.what());
  }
  return out;
}

std::unique_ptr<Model> readGeProtoText(const std::string& text, const std::string& displayName,
                                       std::vector<std::string>& warnings) {
  google::protobuf::Arena arena;
  auto& md = *google::protobuf::Arena::CreateMessage<ge::proto::ModelDef>(&arena);
  google::protobuf::TextFormat::Parser parser;
  parser.SetRecursionLimit(kMaxSubgraphDepth * 4);  // nested GraphDefs in attributes: bounded, never a stack overflow
  struct Collector final : google::protobuf::io::ErrorCollector {
    std::string first;
    void AddError(int line, int column, const std::string& message) override {
      if (first.empty()) first = "line " + std::to_string(line + 1) + ":" + std::to_string(column + 1) + ": " + message;
    }
  } errors;
  parser.RecordErrorsTo(&errors);
  {
    google::protobuf::LogSilencer quiet;
    if (!parser.ParseFromString(text, &md))
      throw LoadError(displayName, "not a ge.proto.ModelDef in protobuf text format (" +
                                       (errors.first.empty() ? std::string("parse failed") : errors.first) + ")");
  }
  auto m = std::make_unique<Model>();
  m->sourcePath = displayName;
  m->opsets = {{"", 17}, {kGeDomain, 1}};
  m->modelVersion = md.version();
  Builder(*m, displayName, nullptr, nullptr, warnings).build(md);
  addModelMetadata(*m, md);
  return m;
}

size_t omModelCount(const std::string& path) {
  try {
    const MappedFileStorage storage(path);
    const OmContainer c = parseOmContainer(std::span<const uint8_t>(storage.data(), storage.size()), path);
    return std::max<size_t>(c.models.size(), 1);
  } catch (const std::exception&) {
    return 1;
  }
}

OmImport readOmFile(const std::string& path, size_t modelIndex, const std::string& displayName) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw LoadError(path, "cannot open: no such file");
  if (S_ISDIR(st.st_mode)) throw LoadError(path, "is a directory, not an .om file");
  if (st.st_size == 0) throw LoadError(path, "file is empty");
  std::shared_ptr<const Storage> storage;
  try {
    storage = std::make_shared<MappedFileStorage>(path);
  } catch (const std::exception& e) {
    throw LoadError(path, e.what());
  }
  return readOmBytes(std::move(storage), displayName.empty() ? path : displayName, modelIndex);
}

}  // namespace kiln::om
