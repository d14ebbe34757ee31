#include "io/om/om_writer.h"

#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/text_format.h>

#include "io/om/ge_ir.pb.h"
#include "io/om/ge_types.h"
#include "io/om/om_container.h"
#include "io/om/ge_model_builder.h"
#include "io/om/om_writer_parts.h"
#include "io/om/task.pb.h"
#include "ir/fused_node.h"
#include "ir/graph.h"
#include "ir/model.h"
#include "memory/lifetimes.h"
#include "options/options.h"
#include "schedule/task_list.h"

namespace kiln::om {
namespace {

int64_t alignUp(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

std::vector<int64_t> dimsOf(const ValueType& t) {
  std::vector<int64_t> d;
  for (const Dim& x : t.shape.dims()) d.push_back(x.isStatic() ? x.value : -1);
  return d;
}

void describe(ge::proto::TensorDescriptor& d, const Value& v, int64_t bytes) {
  d.set_name(v.name());
  d.set_dtype(static_cast<ge::proto::DataType>(geProtoDataType(v.type().dtype)));
  for (int64_t x : dimsOf(v.type())) d.mutable_shape()->add_dim(x);
  d.set_layout(std::string(formatName(v.type().format)));
  d.set_size(bytes);
  d.set_real_dim_cnt(int64_t(v.type().shape.rank()));
  // A blocked layout hides the logical tensor: GE records it as origin_shape / origin_format.
  if (v.type().originShape.rankKnown()) {
    ge::proto::AttrDef shape;
    for (const Dim& x : v.type().originShape.dims()) shape.mutable_list()->add_i(x.isStatic() ? x.value : -1);
    shape.mutable_list()->set_val_type(ge::proto::AttrDef::ListValue::VT_LIST_INT);
    (*d.mutable_attr())["origin_shape"] = std::move(shape);
    (*d.mutable_attr())["origin_format"].set_s(std::string(formatName(v.type().originFormat)));
  }
}

ge::proto::AttrDef stringAttr(const std::string& s) {
  ge::proto::AttrDef a;
  a.set_s(s);
  return a;
}

ge::proto::AttrDef intAttr(int64_t i) {
  ge::proto::AttrDef a;
  a.set_i(i);
  return a;
}

// ONNX attributes that have an AttrDef form (numbers, strings and their lists); tensors and graphs are left out.
void copyAttributes(const Node& n, ge::proto::OpDef& op) {
  auto& attrs = *op.mutable_attr();
  for (const NamedAttribute& a : n.attributes()) {
    ge::proto::AttrDef d;
    if (const auto* i = a.value.get<int64_t>()) d.set_i(*i);
    else if (const auto* f = a.value.get<float>()) d.set_f(*f);
    else if (const auto* s = a.value.get<std::string>()) d.set_s(*s);
    else if (const auto* is = a.value.get<std::vector<int64_t>>()) {
      for (int64_t x : *is) d.mutable_list()->add_i(x);
      d.mutable_list()->set_val_type(ge::proto::AttrDef::ListValue::VT_LIST_INT);
    } else if (const auto* fs = a.value.get<std::vector<float>>()) {
      for (float x : *fs) d.mutable_list()->add_f(x);
      d.mutable_list()->set_val_type(ge::proto::AttrDef::ListValue::VT_LIST_FLOAT);
    } else if (const auto* ss = a.value.get<std::vector<std::string>>()) {
      for (const auto& x : *ss) d.mutable_list()->add_s(x);
      d.mutable_list()->set_val_type(ge::proto::AttrDef::ListValue::VT_LIST_STRING);
    } else {
      continue;
    }
    attrs[a.name] = std::move(d);
  }
  attrs["_kiln.op_type"] = stringAttr(n.qualifiedType());
  // As GE does for its fused ops: the framework ops this op stands for (tools match them with the source model).
  if (const std::vector<std::string> names = originalNodeNames(n); !names.empty()) {
    ge::proto::AttrDef d;
    for (const std::string& x : names) d.mutable_list()->add_s(x);
    d.mutable_list()->set_val_type(ge::proto::AttrDef::ListValue::VT_LIST_STRING);
    attrs["_datadump_original_op_names"] = std::move(d);
  }
  for (const auto& [k, v] : n.annotations()) attrs["_kiln." + k] = stringAttr(v);
}

// Where every tensor lives on the device (see the header) and the weight blob.
struct Addresses {
  std::unordered_map<const Value*, int64_t> offset;
  std::unordered_map<const Value*, int64_t> bytes;
  int64_t arenaBytes = 0, memorySize = 0;
  std::string weights;
};

Addresses assignAddresses(const Graph& g, const memory::Lifetimes& life) {
  Addresses a;
  // The arena: offsets the MemoryAssignment pass wrote on the producers.
  for (const Node* n : g.nodes()) {
    const std::string mem = n->annotation("mem.out");
    if (mem.empty()) throw std::runtime_error("node '" + n->name() + "' has no memory offsets: compile the model "
                                              "through Stage 3 (MemoryAssignment) before writing an .om");
    size_t pos = 0;
    for (size_t i = 0; i < n->numOutputs(); ++i) {
      const size_t comma = mem.find(',', pos);
      const std::string item = mem.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
      pos = comma == std::string::npos ? mem.size() : comma + 1;
      const Value* v = n->output(i);
      const memory::TensorLifetime* t = v ? life.find(v) : nullptr;
      if (!t || t->kind != memory::TensorKind::Arena) continue;
      a.offset[v] = std::stoll(item);
      a.bytes[v] = t->bytes;
      a.arenaBytes = std::max(a.arenaBytes, a.offset[v] + t->bytes);
    }
  }
  int64_t cursor = alignUp(a.arenaBytes, memory::kArenaAlignment);
  auto place = [&](const Value* v) {
    const memory::TensorLifetime* t = life.find(v);
    if (!v || a.offset.count(v) || !t) return;
    if (t->kind == memory::TensorKind::Unsized || !v->type().shape.isStatic())
      throw std::runtime_error("tensor '" + v->name() + "' has no static size (" + v->type().shape.toString() +
                               "): bind the input shapes (input_shape) before writing an .om");
    if (t->kind == memory::TensorKind::Weight) {
      const Attribute* value = v->producer() ? v->producer()->attr("value") : nullptr;
      const Tensor* data = v->constant() ? v->constant() : value ? value->get<Tensor>() : nullptr;
      const int64_t at = alignUp(int64_t(a.weights.size()), memory::kArenaAlignment);
      a.weights.resize(size_t(at), '\0');
      if (data && data->data()) a.weights.append(reinterpret_cast<const char*>(data->data()), data->byteSize());
      a.offset[v] = at;
    } else {
      cursor = alignUp(cursor, memory::kZeroCopyAlignment);
      a.offset[v] = cursor;
      cursor += t->bytes;
    }
    a.bytes[v] = t->bytes;
  };
  for (const Value* v : g.inputs()) place(v);
  for (const Value* v : g.outputs()) place(v);
  for (const memory::TensorLifetime& t : life.tensors) place(t.value);
  a.memorySize = cursor;
  return a;
}

}  // namespace

std::string geOpType(const std::string& qualifiedType, size_t inputRank) {
  static const std::map<std::string, std::string> kNames = {
      {"Conv", "Conv2D"},           {"ConvTranspose", "Conv2DTranspose"}, {"Softmax", "SoftmaxV2"},
      {"kiln:FusedConv", "Conv2D"}, {"kiln:TransData", "TransData"},      {"kiln:TransDataCast", "TransData"},
      {"Gemm", "MatMulV2"},         {"kiln:LayerNorm", "LayerNorm"},      {"kiln:Attention", "FlashAttentionScore"},
      {"Constant", "Const"},        {"kiln:Gelu", "Gelu"},
      // The opset 18-23 ops GE runs as one fused kernel, and Kiln's fused norms (CANN's op names).
      {"Gelu", "Gelu"},             {"Mish", "Mish"},                     {"GroupNormalization", "GroupNorm"},
      {"RMSNormalization", "RmsNorm"}, {"kiln:RmsNorm", "RmsNorm"},       {"kiln:AddRmsNorm", "AddRmsNorm"},
      {"kiln:AddLayerNorm", "AddLayerNorm"}, {"Attention", "FlashAttentionScore"},
      {"RotaryEmbedding", "RotaryPositionEmbedding"}, {"kiln:WeightQuantMatMul", "WeightQuantBatchMatmulV2"},
  };
  if (qualifiedType == "MatMul" || qualifiedType == "kiln:FusedMatMul")
    return inputRank > 2 ? "BatchMatMulV2" : "MatMulV2";
  auto it = kNames.find(qualifiedType);
  return it == kNames.end() ? "" : it->second;
}

std::string geVocabularyType(const Node& n) {
  if (n.domain() == kGeDomain) return n.opType();
  const size_t rank = n.numInputs() > 0 && n.input(0) && n.input(0)->type().shape.rankKnown()
                          ? n.input(0)->type().shape.rank()
                          : 0;
  const std::string ge = geOpType(n.qualifiedType(), rank);
  return ge.empty() ? n.qualifiedType() : ge;
}

namespace {

// Op names unique within one GraphDef, as GE's "src:idx" references need: a clash gets "_1", "_2"...
class OpNames {
 public:
  std::string operator()(std::string want, const std::string& fallback) {
    if (want.empty()) want = fallback;
    std::string name = want;
    for (int k = 1; used_.count(name); ++k) name = want + "_" + std::to_string(k);
    used_.insert(name);
    return name;
  }

 private:
  std::set<std::string> used_;
};

// A node's op: its unique name and GE's type for it (Kiln's own when GE has no name for the op).
void nameAndType(ge::proto::OpDef& op, const Node& n, OpNames& names) {
  op.set_name(names(n.name(), n.opType() + "_" + std::to_string(n.id())));
  const size_t rank = n.numInputs() > 0 && n.input(0) ? n.input(0)->type().shape.rank() : 0;
  const std::string ge = geOpType(n.qualifiedType(), rank);
  op.set_type(ge.empty() ? n.opType() : ge);
}

// The graph's NetOutput op: one input per graph output (with its device offset when `offsetOf` is given), also
// listed as the GraphDef's outputs.
void addNetOutput(ge::proto::GraphDef& gd, const Graph& g, const std::unordered_map<const Value*, std::string>& ref,
                  OpNames& names, int64_t id, const std::function<int64_t(const Value*)>& bytesOf,
                  const std::function<int64_t(const Value*)>& offsetOf) {
  ge::proto::OpDef& out = *gd.add_op();
  out.set_name(names("NetOutput", "NetOutput"));
  out.set_type("NetOutput");
  out.set_id(id);
  for (const Value* v : g.outputs()) {
    auto r = ref.find(v);
    const std::string src = r == ref.end() ? "" : r->second;
    out.add_input(src);
    if (offsetOf) out.add_input_i(offsetOf(v));
    describe(*out.add_input_desc(), *v, bytesOf(v));
    gd.add_output(src);
  }
}

constexpr int kMaxSubgraphDepth = 64;  // as the reader's limit

// The values of an enclosing graph that a node's subgraphs read. GE passes them in explicitly: they are appended to
// the node's op as extra inputs (in this order), and each body reads one through a Data op whose
// `_parent_node_index` is that input's index in the op.
struct Captures {
  const Node* owner = nullptr;  // its own inputs come first; one of them read by a body is passed as it is
  std::vector<const Value*> values;

  int64_t parentIndex(const Value* v) {
    const auto& own = owner->inputs();
    if (auto it = std::find(own.begin(), own.end(), v); it != own.end()) return int64_t(it - own.begin());
    auto it = std::find(values.begin(), values.end(), v);
    if (it == values.end()) it = values.insert(values.end(), v);
    return int64_t(own.size() + size_t(it - values.begin()));
  }
};

// Writes `n`'s subgraphs as GraphDefs of `model` referenced by `op`; returns what they read from the graph `n` is in.
std::vector<const Value*> writeSubgraphs(const Node& n, ge::proto::OpDef& op, ge::proto::ModelDef& model, int depth);

// One subgraph (a fused node's body, a control-flow branch) as a GraphDef of its own: Data per input (attr `index`),
// Const per constant with its bytes inline, one op per node, NetOutput. No device offsets: a body's tensors live
// inside its one kernel (fused) or are placed by GE when the branch runs (control flow), outside Kiln's plan. A value
// of an enclosing graph that the body reads (as ONNX If/Loop bodies may) becomes one more Data op, after the body's
// own inputs, with `_parent_node_index` naming the owner op's input that carries it (`captures`).
void writeGraphBody(const Graph& g, ge::proto::GraphDef& gd, ge::proto::ModelDef& model, int depth,
                    Captures& captures) {
  OpNames uniqueName;
  std::unordered_map<const Value*, std::string> ref;
  int64_t nextId = 0;
  auto bytesOf = [](const Value* v) { return memory::geTensorBytes(v->type().byteSize().value_or(0)); };
  auto constOp = [&](const Value* v) {
    ge::proto::OpDef& op = *gd.add_op();
    op.set_name(uniqueName(v->name(), "const"));
    op.set_type("Const");
    op.set_id(nextId++);
    describe(*op.add_output_desc(), *v, bytesOf(v));
    ge::proto::TensorDef& t = *(*op.mutable_attr())["value"].mutable_t();
    describe(*t.mutable_desc(), *v, bytesOf(v));
    if (const Tensor* data = v->constant(); data && data->data())
      t.set_data(reinterpret_cast<const char*>(data->data()), data->byteSize());
    ref[v] = op.name() + ":0";
  };
  int64_t dataIndex = 0;
  auto dataOp = [&](const Value* v) -> ge::proto::OpDef& {
    ge::proto::OpDef& op = *gd.add_op();
    op.set_name(uniqueName(v->name(), "input"));
    op.set_type("Data");
    op.set_id(nextId++);
    describe(*op.add_output_desc(), *v, bytesOf(v));
    (*op.mutable_attr())["index"] = intAttr(dataIndex++);
    ref[v] = op.name() + ":0";
    gd.add_input(op.name() + ":0");
    return op;
  };
  for (const Value* v : g.inputs()) {
    if (v->constant()) constOp(v);
    else dataOp(v);
  }
  // A value this body reads without defining it: an outer constant is copied in, anything else is captured.
  auto resolve = [&](const Value* v) {
    if (!v || ref.count(v)) return;
    if (v->constant() && !v->producer()) return constOp(v);
    (*dataOp(v).mutable_attr())["_parent_node_index"] = intAttr(captures.parentIndex(v));
  };
  for (const Node* n : g.nodes()) {
    for (const Value* v : n->inputs()) resolve(v);
    ge::proto::OpDef& op = *gd.add_op();
    nameAndType(op, *n, uniqueName);
    op.set_id(nextId++);
    auto addInput = [&](const Value* v) {
      auto r = v ? ref.find(v) : ref.end();
      op.add_input(r == ref.end() ? "" : r->second);
      ge::proto::TensorDescriptor& d = *op.add_input_desc();
      if (v) describe(d, *v, bytesOf(v));
    };
    for (const Value* v : n->inputs()) addInput(v);
    for (size_t i = 0; i < n->numOutputs(); ++i) {
      ge::proto::TensorDescriptor& d = *op.add_output_desc();
      if (const Value* v = n->output(i)) {
        describe(d, *v, bytesOf(v));
        ref[v] = op.name() + ":" + std::to_string(i);
      }
    }
    copyAttributes(*n, op);
    for (const Value* v : writeSubgraphs(*n, op, model, depth)) {
      resolve(v);
      addInput(v);
    }
  }
  for (const Value* v : g.outputs()) resolve(v);  // a branch may return an outer value as it is
  addNetOutput(gd, g, ref, uniqueName, nextId++, bytesOf, nullptr);
}

std::vector<const Value*> writeSubgraphs(const Node& n, ge::proto::OpDef& op, ge::proto::ModelDef& model, int depth) {
  ge::proto::AttrDef names;
  Captures captures;
  captures.owner = &n;
  for (const NamedAttribute& a : n.attributes()) {
    std::vector<Attribute::GraphPtr> graphs;
    if (const auto* one = a.value.get<Attribute::GraphPtr>()) graphs.push_back(*one);
    else if (const auto* many = a.value.get<std::vector<Attribute::GraphPtr>>()) graphs = *many;
    for (size_t i = 0; i < graphs.size(); ++i) {
      if (!graphs[i]) continue;
      if (depth >= kMaxSubgraphDepth)
        throw std::runtime_error("op '" + n.name() + "': subgraphs nested deeper than " +
                                 std::to_string(kMaxSubgraphDepth) + " levels");
      // Unique across the model: GE finds subgraphs by name.
      std::string name = op.name() + "/" + a.name + (graphs.size() > 1 ? "_" + std::to_string(i) : "");
      for (int k = 1; std::any_of(model.graph().begin(), model.graph().end(),
                                  [&](const ge::proto::GraphDef& gd) { return gd.name() == name; });
           ++k)
        name = op.name() + "/" + a.name + "#" + std::to_string(k);
      ge::proto::GraphDef& gd = *model.add_graph();  // earlier GraphDefs stay where they are (pointer storage)
      gd.set_name(name);
      writeGraphBody(*graphs[i], gd, model, depth + 1, captures);
      op.add_subgraph_name(name);
      names.mutable_list()->add_s(a.name);
    }
  }
  if (names.has_list()) {
    names.mutable_list()->set_val_type(ge::proto::AttrDef::ListValue::VT_LIST_STRING);
    (*op.mutable_attr())["_kiln.subgraph_attrs"] = std::move(names);
  }
  return captures.values;
}

// The op list GE would record: Data per graph input, Const per weight, one op per node, NetOutput. With `addr`
// (a compiled model) every slot carries its device offset and Const ops their data_offset; without (a dump of an
// intermediate graph) offsets are left out, as in GE's dumps before memory assignment.
struct ModelDefBuild {
  ge::proto::ModelDef model;
  std::unordered_map<const Node*, int64_t> opIndex;
  std::unordered_map<const Node*, std::string> opName;
};

ModelDefBuild buildModelDef(const Model& compiled, const memory::Lifetimes& life, const Addresses* addr) {
  const Graph& g = *compiled.graph;
  ModelDefBuild b;
  ge::proto::ModelDef& model = b.model;
  model.set_name(g.name().empty() ? "kiln_model" : g.name());
  model.set_version(1);
  ge::proto::GraphDef& graph = *model.add_graph();
  graph.set_name(model.name());
  auto bytesOf = [&](const Value* v) {
    const memory::TensorLifetime* t = life.find(v);
    return t ? t->bytes : 0;
  };
  auto offsetOf = [&](const Value* v) -> int64_t {
    if (!addr || !v) return -1;
    auto it = addr->offset.find(v);
    return it == addr->offset.end() ? -1 : it->second;
  };

  // Op names: unique, as GE's "src:idx" references need.
  OpNames uniqueName;
  std::unordered_map<const Value*, std::string> ref;  // "op:idx" of every value
  int64_t nextId = 0;
  auto markWeight = [&](ge::proto::TensorDescriptor& d, const Value* v) {
    if (!addr) return;
    d.set_data_offset(offsetOf(v));
    d.set_weight_size(bytesOf(v));
  };
  auto dataOrConst = [&](const Value* v, bool isInput) {
    ge::proto::OpDef& op = *graph.add_op();
    op.set_name(uniqueName(v->name(), isInput ? "input" : "const"));
    op.set_type(isInput ? "Data" : "Const");
    op.set_id(nextId++);
    ge::proto::TensorDescriptor& d = *op.add_output_desc();
    describe(d, *v, bytesOf(v));
    if (addr) op.add_output_i(offsetOf(v));
    if (!isInput) markWeight(d, v);
    ref[v] = op.name() + ":0";
    return &op;
  };
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    ge::proto::OpDef* op = dataOrConst(g.inputs()[i], true);
    (*op->mutable_attr())["index"] = intAttr(int64_t(i));
    graph.add_input(op->name() + ":0");
  }
  for (const memory::TensorLifetime& t : life.tensors)
    if (t.kind == memory::TensorKind::Weight && !t.value->producer()) dataOrConst(t.value, false);

  for (const Node* n : g.nodes()) {
    ge::proto::OpDef& op = *graph.add_op();
    nameAndType(op, *n, uniqueName);
    op.set_id(nextId);
    b.opIndex[n] = nextId++;
    b.opName[n] = op.name();
    const std::string stream = n->annotation("stream");
    op.set_stream_id(stream.empty() ? 0 : std::stoll(stream));
    auto addInput = [&](const Value* v) {
      auto r = v ? ref.find(v) : ref.end();
      op.add_input(r == ref.end() ? "" : r->second);
      if (addr) op.add_input_i(offsetOf(v));
      ge::proto::TensorDescriptor& d = *op.add_input_desc();
      if (v) describe(d, *v, bytesOf(v));
      op.add_is_input_const(v && life.find(v) && life.find(v)->kind == memory::TensorKind::Weight);
    };
    for (const Value* v : n->inputs()) addInput(v);
    for (size_t i = 0; i < n->numOutputs(); ++i) {
      const Value* v = n->output(i);
      ge::proto::TensorDescriptor& d = *op.add_output_desc();
      if (v) {
        describe(d, *v, bytesOf(v));
        ref[v] = op.name() + ":" + std::to_string(i);
        if (n->opType() == "Constant") markWeight(d, v);  // its data went into WEIGHTS_DATA like an initializer's
      }
      if (addr) op.add_output_i(offsetOf(v));
    }
    copyAttributes(*n, op);
    // What its subgraphs read of the main graph comes in as further inputs, with their offsets (GE's form).
    for (const Value* v : writeSubgraphs(*n, op, model, 1)) addInput(v);
  }
  addNetOutput(graph, g, ref, uniqueName, nextId++, bytesOf,
               addr ? std::function<int64_t(const Value*)>(offsetOf) : nullptr);
  return b;
}

}  // namespace

std::string modelDefText(const Model& m) {
  const Graph& g = *m.graph;
  const memory::Lifetimes life = memory::computeLifetimes(g);
  // After MemoryAssignment every node carries its offsets: the dump shows them, as GE's post-build dumps do.
  const bool assigned = std::all_of(g.nodes().begin(), g.nodes().end(),
                                    [](const Node* n) { return !n->annotation("mem.out").empty(); });
  std::optional<Addresses> addr;
  if (assigned && g.numNodes() > 0 && life.unsized == 0) addr = assignAddresses(g, life);
  std::string text;
  google::protobuf::TextFormat::PrintToString(buildModelDef(m, life, addr ? &*addr : nullptr).model, &text);
  return text;
}

OmParts buildOmParts(const Model& compiled, const Options& options) {
  const Graph& g = *compiled.graph;
  const memory::Lifetimes life = memory::computeLifetimes(g);
  Addresses addr = assignAddresses(g, life);
  const std::vector<Task> tasks = buildTaskList(g, aiCoreCount(options.getString("soc_version")));
  ModelDefBuild b = buildModelDef(compiled, life, &addr);
  ge::proto::ModelDef& model = b.model;
  const auto& opIndex = b.opIndex;
  const auto& opName = b.opName;

  // Tasks.
  domi::ModelTaskDef taskDef;
  taskDef.set_version("1");
  std::set<int> streams;
  int events = 0;
  for (const Task& t : tasks) {
    domi::TaskDef& d = *taskDef.add_task();
    d.set_id(uint32_t(t.id));
    d.set_type(uint32_t(t.type));
    d.set_stream_id(uint32_t(t.stream));
    streams.insert(t.stream);
    if (t.event >= 0) {
      d.set_event_id(uint32_t(t.event));
      events = std::max(events, t.event + 1);
    }
    if (t.type == TaskType::Kernel) {
      domi::KernelDef& k = *d.mutable_kernel();
      k.set_block_dim(uint32_t(t.blockDim));
      k.set_kernel_name(opName.at(t.node));
      k.mutable_context()->set_op_index(uint32_t(opIndex.at(t.node)));
    }
    if (t.type == TaskType::KernelEx) d.mutable_kernel_ex();
    if (t.type == TaskType::MemcpyAsync) d.mutable_memcpy_async();
  }
  taskDef.set_memory_size(uint64_t(addr.memorySize));
  taskDef.set_weight_size(addr.weights.size());
  taskDef.set_stream_num(uint32_t(streams.size()));
  taskDef.set_event_num(uint32_t(events));

  auto& attrs = *model.mutable_attr();
  attrs["memory_size"] = intAttr(addr.memorySize);
  attrs["weight_size"] = intAttr(int64_t(addr.weights.size()));
  attrs["stream_num"] = intAttr(int64_t(streams.size()));
  attrs["event_num"] = intAttr(events);
  attrs["label_num"] = intAttr(0);
  attrs["soc_version"] = stringAttr(options.getString("soc_version"));
  attrs["_kiln.arena_bytes"] = intAttr(addr.arenaBytes);

  OmParts parts;
  OmInOutInfo& io = parts.io;
  auto info = [&](const Value* v) {
    OmTensorInfo t;
    t.size = uint64_t(addr.bytes[v]);
    t.format = geCppFormat(v->type().format);
    t.dataType = geCppDataType(v->type().dtype);
    t.name = v->name();
    t.dims = dimsOf(v->type());
    return t;
  };
  for (const Value* v : g.inputs()) io.inputs.push_back(info(v));
  for (const Value* v : g.outputs()) io.outputs.push_back(info(v));
  parts.model = std::move(model);
  parts.tasks = std::move(taskDef);
  parts.weights = std::move(addr.weights);
  parts.memorySize = addr.memorySize;
  parts.arenaBytes = addr.arenaBytes;
  return parts;
}

std::string deterministicBytes(const google::protobuf::MessageLite& message) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    message.SerializeToCodedStream(&coded);
  }
  return out;
}

std::string assembleOmFile(const OmParts& om, const Options& options) {
  std::vector<OmPartitionPayload> parts;
  parts.push_back({uint32_t(PartitionType::ModelInOutInfo), writeInOutInfo(om.io)});
  parts.push_back({uint32_t(PartitionType::ModelDef), deterministicBytes(om.model)});
  if (!om.weights.empty()) parts.push_back({uint32_t(PartitionType::WeightsData), om.weights});
  parts.push_back({uint32_t(PartitionType::TaskInfo), deterministicBytes(om.tasks)});
  OmHeader header;
  header.name = om.model.name().substr(0, 31);
  header.ops = 0;
  for (const auto& g : om.model.graph()) header.ops += uint32_t(g.op_size());
  header.platformVersion = options.getString("soc_version").substr(0, 19);
  return writeOmContainer(header, {parts});
}

std::string buildOmFile(const Model& compiled, const Options& options) {
  return assembleOmFile(buildOmParts(compiled, options), options);
}

void writeBytesFile(const std::string& bytes, const std::string& path) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f || !f.write(bytes.data(), std::streamsize(bytes.size())) || !f.flush())
    throw std::runtime_error("cannot write " + path);
}

void writeOmFile(const Model& compiled, const Options& options, const std::string& path) {
  writeBytesFile(buildOmFile(compiled, options), path);
}

}  // namespace kiln::om
