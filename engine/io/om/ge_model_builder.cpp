#include "io/om/ge_model_builder.h"

#include <google/protobuf/descriptor.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cstring>
#include <map>
#include <optional>
#include <unordered_set>

#include "io/lenient/lenient_proto.h"
#include "io/om/ge_ir.pb.h"
#include "io/om/ge_types.h"
#include "io/om/om_plan.h"
#include "ir/graph.h"
#include "ir/model.h"
#include "ir/model_metadata.h"
#include "util/load_error.h"
#include "util/text_encoding.h"

namespace kiln::om {
namespace {

constexpr int kMaxSubgraphDepth = 64;
constexpr size_t kMaxInlineBytesAttr = 4096;  // longer bytes attributes are shown as "<N bytes>"

std::string joinInts(const google::protobuf::RepeatedField<int64_t>& v) {
  std::string s;
  for (int64_t x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}


// Builds the IR from the parsed protobuf. Every problem in the file throws LoadError naming the op and graph.
class Builder {
 public:
  Builder(Model& m, const std::string& file, const GeWeights* weights, const lenient::ParseReport* extras,
          std::vector<std::string>& warnings)
      : m_(m), file_(file), warnings_(warnings) {
    if (weights) {
      storage_ = weights->storage;
      weightsOffset_ = weights->offset;
      weightsSize_ = weights->size;
      hasWeights_ = true;
    }
    extras_ = extras && extras->extraCount ? extras : nullptr;
  }

  void build(const ge::proto::ModelDef& md) {
    if (md.graph_size() == 0) fail("the model holds no graph");
    // Before anything reads a map field through its generated accessors (which would copy the map's values).
    if (extras_) locateExtras(md);
    for (int i = 1; i < md.graph_size(); ++i) subgraphDefs_.emplace(md.graph(i).name(), &md.graph(i));
    m_.graph->setName(text(md.graph(0).name()));
    buildGraph(md.graph(0), *m_.graph, 0);
    for (const auto& [name, value] : modelExtras_) m_.metadata.emplace_back("raw." + name, value);
  }

  GeModelIndex takeIndex() { return std::move(index_); }

 private:
  [[noreturn]] void fail(const std::string& problem) const { throw LoadError(file_, problem); }

  // A name or string from the file as text Kiln can show and store.
  std::string text(const std::string& raw, bool warnIfDecoded = true) {
    bool decoded = false;
    std::string out = displayableUtf8(raw, &decoded);
    if (decoded && warnIfDecoded && !warnedEncoding_) {
      warnedEncoding_ = true;
      warn("names or strings that are not UTF-8 were read as GBK (or escaped where they are not GBK either)");
    }
    return out;
  }

  // Each extra field, moved to the op it belongs to (or the model), with its path below it.
  void locateExtras(const ge::proto::ModelDef& md) {
    for (const lenient::LocatedExtra& e : lenient::locateExtras(md, *extras_, ge::proto::OpDef::descriptor()->full_name())) {
      const std::string value = e.field->text;
      if (e.anchor) opExtras_[static_cast<const ge::proto::OpDef*>(e.anchor)].emplace_back(e.path, value);
      else modelExtras_.emplace_back(e.path, value);
    }
  }
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

  std::string opLabel(const ge::proto::OpDef& op, const Graph& g) {
    return "op '" + text(op.name()) + "' (" + text(op.type()) + ") of graph '" + g.name() + "'";
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
      n.setAnnotation(key + "origin_format", text(it->second.s()));
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
    auto bytesText = [](const std::string& s) -> std::string {
      return s.size() <= kMaxInlineBytesAttr ? s : "<" + std::to_string(s.size()) + " bytes>";
    };
    switch (a.value_case()) {
      case A::kS: return Attribute(text(a.s(), false));
      case A::kI: return Attribute(a.i());
      case A::kF: return Attribute(a.f());
      case A::kB: return Attribute(static_cast<int64_t>(a.b()));
      case A::kBt: return Attribute(text(bytesText(a.bt()), false));
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
        if (l.s_size()) {
          std::vector<std::string> v;
          for (const auto& x : l.s()) v.push_back(text(x, false));
          return Attribute(std::move(v));
        }
        if (l.i_size()) return Attribute(std::vector<int64_t>(l.i().begin(), l.i().end()));
        if (l.f_size()) return Attribute(std::vector<float>(l.f().begin(), l.f().end()));
        if (l.b_size()) return Attribute(std::vector<int64_t>(l.b().begin(), l.b().end()));
        if (l.dt_size()) return Attribute(std::vector<int64_t>(l.dt().begin(), l.dt().end()));
        if (l.bt_size()) {
          std::vector<std::string> v;
          for (const auto& x : l.bt()) v.push_back(text(bytesText(x), false));
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
    auto sub = parent.makeSubgraph(text(gd.name()));
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
      if (op.name().empty()) fail("an op of type '" + text(op.type()) + "' in graph '" + g.name() + "' has no name");
      if (local.count(op.name())) fail("graph '" + g.name() + "' has two ops named '" + text(op.name()) + "'");
      size_t dataSlots = 0;
      for (const auto& in : op.input())
        if (in.empty() || !in.ends_with(":-1")) ++dataSlots;
      const bool isNetOutput = op.type() == "NetOutput";
      const size_t nOut = isNetOutput ? dataSlots : static_cast<size_t>(op.output_desc_size());
      std::vector<std::string> names;
      const std::string name = text(op.name());
      for (size_t i = 0; i < nOut; ++i) names.push_back(name + ":" + std::to_string(i));
      Node* n = g.addNode(text(op.type()), {}, names, name, kGeDomain);
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
          fail(where + ": input " + std::to_string(j) + " '" + text(ref) + "' names '" + text(src) +
               "', which is not an op of the graph");
        if (idx == -1) {
          control += (control.empty() ? "" : ",") + text(src);
          continue;
        }
        if (idx < 0 || static_cast<uint64_t>(idx) >= it->second->numOutputs())
          fail(where + ": input " + std::to_string(j) + " '" + text(ref) + "' reads output " + std::to_string(idx) +
               " of '" + text(src) + "', which has " + std::to_string(it->second->numOutputs()) + " outputs");
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
      if (auto it = opExtras_.find(&op); it != opExtras_.end())
        for (const auto& [path, value] : it->second) n->setAttr("raw." + path, Attribute(value));

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
            warn(where + ": subgraph '" + text(name) + "' is not in the model");
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
      // GE's own byte size of each output (padded, aligned), where it recorded one.
      for (int i = 0; i < op.output_desc_size() && size_t(i) < n->numOutputs(); ++i)
        if (op.output_desc(i).size() > 0)
          n->setAnnotation("om.output" + std::to_string(i) + ".size", std::to_string(op.output_desc(i).size()));
      if (auto it = op.attr().find("tvm_blockdim"); it != op.attr().end() && it->second.value_case() == ge::proto::AttrDef::kI)
        n->setAnnotation("om.block_dim", std::to_string(it->second.i()));
      index_.byId.emplace(op.id(), n);
      index_.byName.emplace(n->name(), n);
    }

    // The graph's outputs are NetOutput's.
    std::vector<Value*> outs;
    for (Node* n : netOutputs)
      for (Value* v : n->outputs()) outs.push_back(v);
    if (outs.empty() && g.parent() == nullptr)
      warn("graph '" + g.name() + (netOutputs.empty() ? "' has no NetOutput" : "'s NetOutput takes only control edges") +
           ": the model shows no outputs");
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
  const lenient::ParseReport* extras_ = nullptr;
  std::unordered_map<const ge::proto::OpDef*, std::vector<std::pair<std::string, std::string>>> opExtras_;
  std::vector<std::pair<std::string, std::string>> modelExtras_;
  bool warnedEncoding_ = false;
  std::vector<std::string>& warnings_;
  uint64_t weightsOffset_ = 0, weightsSize_ = 0;
  bool hasWeights_ = false;
  std::unordered_map<std::string, const ge::proto::GraphDef*> subgraphDefs_;
  GeModelIndex index_;
};

}  // namespace

void addGeModelMetadata(Model& m, const ge::proto::ModelDef& md) {
  std::vector<std::pair<std::string, std::string>> meta;
  for (const auto& [k, v] : md.attr()) {
    switch (v.value_case()) {
      case ge::proto::AttrDef::kI: meta.emplace_back("om." + k, std::to_string(v.i())); break;
      case ge::proto::AttrDef::kB: meta.emplace_back("om." + k, v.b() ? "true" : "false"); break;
      case ge::proto::AttrDef::kF: meta.emplace_back("om." + k, std::to_string(v.f())); break;
      case ge::proto::AttrDef::kS:
        if (v.s().size() <= 256) meta.emplace_back("om." + k, displayableUtf8(v.s()));
        break;
      default: break;
    }
  }
  std::sort(meta.begin(), meta.end());
  m.metadata.insert(m.metadata.end(), meta.begin(), meta.end());
}

GeModelIndex buildGeModel(Model& m, const ge::proto::ModelDef& md, const std::string& file, const GeWeights* weights,
                          const lenient::ParseReport* extras, std::vector<std::string>& warnings) {
  Builder b(m, file, weights, extras, warnings);
  b.build(md);
  return b.takeIndex();
}

std::unique_ptr<Model> buildGeTextModel(const ge::proto::ModelDef& md, const std::string& displayName,
                                        const lenient::ParseReport* report, std::vector<std::string>& warnings) {
  auto m = std::make_unique<Model>();
  m->sourcePath = displayName;
  m->opsets = {{"", 17}, {kGeDomain, 1}};
  m->modelVersion = md.version();
  buildGeModel(*m, md, displayName, nullptr, report, warnings);
  addGeModelMetadata(*m, md);
  if (report)
    if (std::string s = lenient::summarize(*report); !s.empty()) warnings.push_back(s);
  if (carriesGePlan(*m)) {
    annotateOmPlan(*m, {});
    m->precompiled = true;
  }
  return m;
}

bool carriesGePlan(const Model& m) {
  for (const Node* n : m.graph->nodes())
    if (!n->annotation("om.output_offsets").empty()) return true;
  return false;
}

}  // namespace kiln::om
