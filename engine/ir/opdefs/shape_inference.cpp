#include "ir/opdefs/shape_inference.h"

#include <google/protobuf/arena.h>
#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>
#include <onnx/shape_inference/implementation.h>

#include <memory>
#include <optional>
#include <set>
#include <unordered_map>

#include "ir/opdefs/proto_convert.h"
#include "ir/attribute_ranges.h"
#include "ir/graph.h"
#include "ir/model.h"
#include "ir/opdefs/op_registry.h"

namespace kiln {
namespace {

std::string nodeLabel(const Node& n) { return "node '" + n.name() + "' (" + n.qualifiedType() + ")"; }

// Combines what the file declared with what inference found: inferred facts win, but a static or named dimension
// is never replaced by an unknown one. Conflicts are reported.
ValueType mergeTypes(const ValueType& existing, const ValueType& inferred, std::string* conflict) {
  if (!inferred.known()) return existing;
  if (!existing.known()) return inferred;
  if (existing.kind != inferred.kind || !existing.isTensor()) return inferred;
  ValueType out = inferred;
  out.format = existing.format;
  out.originShape = existing.originShape;
  out.originFormat = existing.originFormat;
  if (inferred.dtype == DType::Undefined) out.dtype = existing.dtype;
  else if (existing.dtype != DType::Undefined && existing.dtype != inferred.dtype && conflict)
    *conflict = "declared " + existing.toString() + ", inferred " + inferred.toString();
  if (!inferred.shape.rankKnown()) {
    out.shape = existing.shape;
    return out;
  }
  if (!existing.shape.rankKnown()) return out;
  if (existing.shape.rank() != inferred.shape.rank()) {
    if (conflict) *conflict = "declared " + existing.toString() + ", inferred " + inferred.toString();
    return out;
  }
  for (size_t i = 0; i < out.shape.rank(); ++i) {
    Dim& d = out.shape.dims()[i];
    const Dim& e = existing.shape[i];
    if (d.isStatic()) {
      if (e.isStatic() && e.value != d.value && conflict)
        *conflict = "declared " + existing.toString() + ", inferred " + inferred.toString();
    } else if (e.isStatic() || (!d.isSymbolic() && e.isSymbolic())) {
      d = e;
    }
  }
  return out;
}

class Session;

// Symbolic dims of the form "sym", "sym+3", "sym-1": enough for the position arithmetic exports do with a KV cache
// (past_len + new_len, Range(past_len, past_len + 1)). Anything else stays an opaque name.
struct LinearDim {
  std::string symbol;  // empty: a constant
  int64_t offset = 0;
};

std::optional<LinearDim> parseLinear(const onnx::TensorShapeProto_Dimension& d) {
  if (d.has_dim_value()) return LinearDim{{}, d.dim_value()};
  if (!d.has_dim_param() || d.dim_param().empty()) return std::nullopt;
  const std::string& p = d.dim_param();
  const auto sign = p.find_last_of("+-");
  if (sign == std::string::npos || sign == 0) return LinearDim{p, 0};
  const std::string tail = p.substr(sign + 1);
  if (tail.empty() || tail.find_first_not_of("0123456789") != std::string::npos || tail.size() > 15)
    return LinearDim{p, 0};
  const int64_t k = std::stoll(tail);
  return LinearDim{p.substr(0, sign), p[sign] == '+' ? k : -k};
}

onnx::TensorShapeProto_Dimension formatLinear(const LinearDim& l) {
  onnx::TensorShapeProto_Dimension d;
  if (l.symbol.empty()) d.set_dim_value(l.offset);
  else if (l.offset == 0) d.set_dim_param(l.symbol);
  else d.set_dim_param(l.symbol + (l.offset > 0 ? "+" : "-") + std::to_string(l.offset > 0 ? l.offset : -l.offset));
  return d;
}

// libonnx sees a subgraph (If/Loop/Scan body) through this.
class SubgraphInferencer final : public onnx::GraphInferencer {
 public:
  SubgraphInferencer(Session& s, Graph& g) : session_(s), graph_(g) {}
  std::vector<const onnx::TypeProto*> doInferencing(const std::vector<const onnx::TypeProto*>& inputTypes,
                                                    const std::vector<const onnx::TensorProto*>& inputData) override;

 private:
  Session& session_;
  Graph& graph_;
  std::vector<onnx::TypeProto> outputs_;
};

class Session {
 public:
  Session(const std::map<std::string, int64_t>& opsets, const InferenceOptions& o, InferenceReport& r)
      : opsets_(opsets), options_(o), report_(r) {}

  void inferGraph(Graph& g, const std::vector<Node*>* known = nullptr) {
    std::optional<std::vector<Node*>> order;
    if (!known) {
      order = g.topologicalOrder();
      if (!order) order.emplace(g.nodes().begin(), g.nodes().end());
    }
    for (Node* n : known ? *known : *order) {
      if (report_.nodesFailed > options_.stopAfterFailures) {
        report_.stopped = true;
        return;
      }
      inferNode(*n);
    }
  }

  const onnx::TypeProto* typeOf(const Value* v) {
    if (!v || !v->type().known()) return nullptr;
    auto [it, fresh] = types_.try_emplace(v, nullptr);
    if (fresh) {
      it->second = newProto<onnx::TypeProto>();
      onnxio::toTypeProto(v->type(), it->second);
      it->second->clear_denotation();
    }
    return it->second;
  }

  // Protobuf scratch objects of one inference run live on an arena: hundreds of thousands of small messages are
  // allocated by bumping a pointer and freed at once, which keeps the time per node flat on big graphs.
  template <typename T>
  T* newProto() {
    return google::protobuf::Arena::CreateMessage<T>(&arena_);
  }

  void setType(Value* v, const ValueType& t) {
    v->setType(t);
    types_.erase(v);
  }

  // Data of an initializer or of a Constant node's output (any of its value_* spellings).
  const Tensor* constantTensorOf(const Value* v) {
    if (!v) return nullptr;
    if (const Tensor* t = v->constant()) return t;
    const Node* p = v->producer();
    if (!p || p->opType() != "Constant" || !p->domain().empty()) return nullptr;
    if (const Attribute* a = p->attr("value")) return a->get<Tensor>();
    auto it = synthesized_.find(v);
    if (it != synthesized_.end()) return &it->second;
    std::optional<Tensor> t;
    if (const Attribute* a = p->attr("value_int"); a && a->get<int64_t>())
      t = Tensor::fromVector<int64_t>(DType::Int64, {}, {*a->get<int64_t>()});
    else if (const Attribute* b = p->attr("value_ints"); b && b->get<std::vector<int64_t>>())
      t = Tensor::fromVector(DType::Int64, {static_cast<int64_t>(b->get<std::vector<int64_t>>()->size())},
                             *b->get<std::vector<int64_t>>());
    else if (const Attribute* c = p->attr("value_float"); c && c->get<float>())
      t = Tensor::fromVector<float>(DType::Float, {}, {*c->get<float>()});
    else if (const Attribute* d = p->attr("value_floats"); d && d->get<std::vector<float>>())
      t = Tensor::fromVector(DType::Float, {static_cast<int64_t>(d->get<std::vector<float>>()->size())},
                             *d->get<std::vector<float>>());
    if (!t) return nullptr;
    return &synthesized_.emplace(v, std::move(*t)).first->second;
  }

  const onnx::TensorProto* constantOf(const Value* v) {
    const Tensor* t = constantTensorOf(v);
    if (!t) return propagatedAsTensor(v);
    if (t->numel() > options_.maxConstantElements) return nullptr;
    auto it = constants_.find(v);
    if (it == constants_.end()) {
      it = constants_.emplace(v, std::make_unique<onnx::TensorProto>()).first;
      onnxio::toTensorProto(*t, v->name(), it->second.get(), true);
    }
    return it->second.get();
  }

  const onnx::TensorShapeProto* propagatedOf(const Value* v) {
    if (!v) return nullptr;
    auto it = propagated_.find(v);
    if (it != propagated_.end()) return &it->second;
    // Small integer constants count as propagated data too (as libonnx does for initializers).
    const onnx::TensorProto* c = constantOf(v);
    const Tensor* t = constantTensorOf(v);
    if (!c || !t || (t->dtype() != DType::Int64 && t->dtype() != DType::Int32) || t->dims().size() > 1)
      return nullptr;
    onnx::TensorShapeProto tsp;
    for (int64_t x : t->toInt64()) tsp.add_dim()->set_dim_value(x);
    return &propagated_.emplace(v, std::move(tsp)).first->second;
  }

  void setPropagated(const Value* v, onnx::TensorShapeProto&& tsp) {
    propagated_[v] = std::move(tsp);
    constants_.erase(v);
  }

  // A value computed by data propagation whose every element is known (e.g. Shape of a static tensor) is as good
  // as a constant for inference functions that read input data (Reshape's shape, Unsqueeze's axes...).
  const onnx::TensorProto* propagatedAsTensor(const Value* v) {
    auto it = propagated_.find(v);
    if (it == propagated_.end() || !v->type().isTensor()) return nullptr;
    const DType dt = v->type().dtype;
    if (dt != DType::Int64 && dt != DType::Int32) return nullptr;
    for (const auto& d : it->second.dim())
      if (!d.has_dim_value()) return nullptr;
    auto c = constants_.find(v);
    if (c != constants_.end()) return c->second.get();
    auto proto = std::make_unique<onnx::TensorProto>();
    proto->set_name(v->name());
    proto->set_data_type(dtypeToOnnx(dt));
    if (!(v->type().shape.rankKnown() && v->type().shape.rank() == 0)) proto->add_dims(it->second.dim_size());
    for (const auto& d : it->second.dim()) {
      if (dt == DType::Int64) proto->add_int64_data(d.dim_value());
      else proto->add_int32_data(static_cast<int32_t>(d.dim_value()));
    }
    return constants_.emplace(v, std::move(proto)).first->second.get();
  }

  // Fully known integer values of a small 1-D or scalar input (constant or propagated), for the evaluators below.
  std::optional<std::vector<int64_t>> knownInts(const Value* v) {
    if (const onnx::TensorShapeProto* p = propagatedOf(v)) {
      std::vector<int64_t> out;
      for (const auto& d : p->dim()) {
        if (!d.has_dim_value()) return std::nullopt;
        out.push_back(d.dim_value());
      }
      return out;
    }
    return std::nullopt;
  }

  // Integer evaluation for shape-computing ops libonnx 1.12 has no data propagator for, so that chains such as
  // ConstantOfShape(Sub(Size(Shape(x)), k)) -> Concat -> Reshape resolve to static shapes.
  void propagateExtra(Node& n);
  // libonnx 1.12 infers Reshape/Expand/ConstantOfShape only from constant shapes; exports compute them from
  // Shape(x) with symbolic dims ([batch, seq, 12, 64]). Uses the propagated (symbolic) value instead.
  void refineFromPropagatedShape(Node& n);

  void warn(std::string w) {
    if (report_.warnings.size() < options_.maxWarnings) report_.warnings.push_back(std::move(w));
    else ++report_.warningsDropped;
  }

  int64_t opsetFor(const std::string& domain) const {
    auto it = opsets_.find(domain);
    return it == opsets_.end() ? 0 : it->second;
  }

  const InferenceOptions& options() const { return options_; }

 private:
  void inferNode(Node& n);

  const std::map<std::string, int64_t>& opsets_;
  const InferenceOptions& options_;
  InferenceReport& report_;
  google::protobuf::Arena arena_;
  std::unordered_map<const Value*, onnx::TypeProto*> types_;
  std::unordered_map<const Value*, std::unique_ptr<onnx::TensorProto>> constants_;
  std::unordered_map<const Value*, onnx::TensorShapeProto> propagated_;
  std::unordered_map<const Value*, Tensor> synthesized_;
  std::unordered_map<std::string, const onnx::FunctionProto*> localFunctions_;
  std::vector<std::unique_ptr<onnx::FunctionProto>> localFunctionStore_;

 public:
  void addLocalFunctions(const std::vector<std::string>& serialized) {
    for (const auto& bytes : serialized) {
      auto f = std::make_unique<onnx::FunctionProto>();
      if (!f->ParseFromString(bytes)) continue;
      localFunctions_[f->domain() + ":" + f->name()] = f.get();
      localFunctionStore_.push_back(std::move(f));
    }
  }
  const onnx::FunctionProto* localFunction(const Node& n) const {
    auto it = localFunctions_.find(n.domain() + ":" + n.opType());
    return it == localFunctions_.end() ? nullptr : it->second;
  }
  void inferThroughFunction(Node& n, const onnx::FunctionProto& f, bool inputsKnown);
  std::unordered_map<std::string, int> functionOpsets() const {
    std::unordered_map<std::string, int> m;
    for (const auto& [d, v] : opsets_) m[d] = static_cast<int>(v);
    return m;
  }
  const std::unordered_map<std::string, const onnx::FunctionProto*>& localFunctionMap() const { return localFunctions_; }
};

// Writes a graph's formal inputs/outputs only: what inference functions may look at in a graph attribute.
void writeGraphSignature(const Graph& g, onnx::GraphProto* out, void*) {
  out->set_name(g.name());
  for (const Value* v : g.inputs()) {
    auto* vi = out->add_input();
    vi->set_name(v->name());
    onnxio::toTypeProto(v->type(), vi->mutable_type());
  }
  for (const Value* v : g.outputs()) {
    auto* vi = out->add_output();
    vi->set_name(v->name());
    onnxio::toTypeProto(v->type(), vi->mutable_type());
  }
}

class NodeContext final : public onnx::InferenceContext {
 public:
  NodeContext(Session& s, Node& n) : s_(s), n_(n) {
    outputs_.reserve(n.numOutputs());
    for (size_t i = 0; i < n.numOutputs(); ++i) outputs_.push_back(s.newProto<onnx::TypeProto>());
  }

  const onnx::AttributeProto* getAttribute(const std::string& name) const override {
    auto it = attrs_.find(name);
    if (it != attrs_.end()) return it->second;
    const Attribute* a = n_.attr(name);
    if (!a) return nullptr;
    bool withData = true;
    if (auto t = a->get<Tensor>()) withData = t->numel() <= s_.options().maxConstantElements;
    auto* proto = s_.newProto<onnx::AttributeProto>();
    onnxio::toAttributeProto(name, *a, proto, withData, writeGraphSignature, nullptr);
    attrs_.emplace(name, proto);
    return proto;
  }
  size_t getNumInputs() const override { return n_.numInputs(); }
  const onnx::TypeProto* getInputType(size_t i) const override { return s_.typeOf(n_.input(i)); }
  const onnx::TensorProto* getInputData(size_t i) const override { return s_.constantOf(n_.input(i)); }
  size_t getNumOutputs() const override { return n_.numOutputs(); }
  onnx::TypeProto* getOutputType(size_t i) override { return i < outputs_.size() ? outputs_[i] : nullptr; }
  onnx::GraphInferencer* getGraphAttributeInferencer(const std::string& name) override {
    const Attribute* a = n_.attr(name);
    if (!a) return nullptr;
    auto g = a->get<Attribute::GraphPtr>();
    if (!g || !*g) return nullptr;
    inferencers_.push_back(std::make_unique<SubgraphInferencer>(s_, **g));
    return inferencers_.back().get();
  }
  const onnx::SparseTensorProto* getInputSparseData(size_t) const override { return nullptr; }
  const onnx::TensorShapeProto* getSymbolicInput(size_t i) const override { return s_.propagatedOf(n_.input(i)); }

  const onnx::TypeProto& output(size_t i) const { return *outputs_[i]; }
  // Copies the inferred output types into the IR, merging with what the file declared.
  void commit(Session& s);

 private:
  Session& s_;
  Node& n_;
  std::vector<onnx::TypeProto*> outputs_;
  mutable std::unordered_map<std::string, onnx::AttributeProto*> attrs_;
  std::vector<std::unique_ptr<SubgraphInferencer>> inferencers_;
};

class PropagationContext final : public onnx::DataPropagationContext {
 public:
  PropagationContext(Session& s, Node& n, const NodeContext& inferred) : s_(s), n_(n), inferred_(inferred) {}
  const onnx::AttributeProto* getAttribute(const std::string& name) const override {
    return inferred_.getAttribute(name);
  }
  size_t getNumInputs() const override { return n_.numInputs(); }
  const onnx::TypeProto* getInputType(size_t i) const override { return s_.typeOf(n_.input(i)); }
  size_t getNumOutputs() const override { return n_.numOutputs(); }
  const onnx::TypeProto* getOutputType(size_t i) const override { return s_.typeOf(n_.output(i)); }
  const onnx::TensorShapeProto* getInputData(size_t i) override { return s_.propagatedOf(n_.input(i)); }
  void addOutputData(size_t i, onnx::TensorShapeProto&& tsp) override {
    if (Value* v = n_.output(i)) s_.setPropagated(v, std::move(tsp));
  }

 private:
  Session& s_;
  Node& n_;
  const NodeContext& inferred_;
};

std::vector<const onnx::TypeProto*> SubgraphInferencer::doInferencing(
    const std::vector<const onnx::TypeProto*>& inputTypes, const std::vector<const onnx::TensorProto*>&) {
  const auto& ins = graph_.inputs();
  for (size_t i = 0; i < ins.size() && i < inputTypes.size(); ++i) {
    if (!inputTypes[i]) continue;
    ValueType given = onnxio::fromTypeProto(*inputTypes[i]);
    session_.setType(ins[i], mergeTypes(ins[i]->type(), given, nullptr));
  }
  session_.inferGraph(graph_);
  outputs_.clear();
  outputs_.reserve(graph_.outputs().size());
  for (const Value* v : graph_.outputs()) {
    outputs_.emplace_back();
    if (const onnx::TypeProto* t = session_.typeOf(v)) outputs_.back().CopyFrom(*t);
  }
  std::vector<const onnx::TypeProto*> out;
  for (const auto& t : outputs_) out.push_back(&t);
  return out;
}

void NodeContext::commit(Session& s) {
  for (size_t i = 0; i < n_.numOutputs(); ++i) {
    Value* out = n_.output(i);
    if (!out) continue;
    const onnx::TypeProto& tp = *outputs_[i];
    if (tp.value_case() == onnx::TypeProto::VALUE_NOT_SET) continue;
    std::string conflict;
    ValueType merged = mergeTypes(out->type(), onnxio::fromTypeProto(tp), &conflict);
    if (!conflict.empty()) s.warn(nodeLabel(n_) + ": output '" + out->name() + "' " + conflict);
    s.setType(out, merged);
  }
}

// Ops defined by a function body (libonnx ops without their own inference, model-local functions): libonnx infers
// through the body.
void Session::inferThroughFunction(Node& n, const onnx::FunctionProto& f, bool inputsKnown) {
  NodeContext ctx(*this, n);
  try {
    std::unordered_map<std::string, int> opsets = functionOpsets();
    for (const auto& op : f.opset_import()) opsets[op.domain()] = static_cast<int>(op.version());
    onnx::shape_inference::InferShapeForFunctionNode(f, opsets, onnx::OpSchemaRegistry::Instance(), ctx, {},
                                                     localFunctionMap());
  } catch (const std::exception& e) {
    ++report_.nodesFailed;
    if (inputsKnown) warn(nodeLabel(n) + ": inference through the function body failed: " + e.what());
    return;
  }
  ++report_.nodesInferred;
  ctx.commit(*this);
}

void Session::inferNode(Node& n) {
  ++report_.nodesVisited;
  const OpDef* def = OpRegistry::global().find(n.domain(), n.opType(), opsetFor(n.domain()));
  bool inputsKnown = true;
  for (const Value* v : n.inputs())
    if (v && !v->type().known()) inputsKnown = false;
  if (!def) {
    if (const onnx::FunctionProto* f = localFunction(n)) {
      inferThroughFunction(n, *f, inputsKnown);
      return;
    }
    if (options_.probe && n.subgraphs().empty() && options_.probe(n)) {
      for (Value* out : n.outputs()) types_.erase(out);
      ++report_.nodesInferred;
      return;
    }
    ++report_.unknownOps[n.qualifiedType()];
    // Subgraphs of unknown ops still get their own nodes inferred.
    for (Graph* sg : n.subgraphs()) inferGraph(*sg);
    return;
  }
  // Never hand libonnx a node it would divide by zero on (a .om or a plugin can make one; ONNX files are refused
  // at import).
  if (std::string problem = attributeRangeProblem(n); !problem.empty()) {
    ++report_.nodesFailed;
    warn(nodeLabel(n) + ": not inferred: " + problem);
    return;
  }
  if (def->infer) {
    try {
      def->infer(n);
      for (Value* out : n.outputs()) types_.erase(out);
      ++report_.nodesInferred;
    } catch (const std::exception& e) {
      ++report_.nodesFailed;
      warn(nodeLabel(n) + ": " + e.what());
    }
    return;
  }
  const auto* schema = static_cast<const onnx::OpSchema*>(def->onnxSchema);
  if (!schema) return;
  if (!schema->has_type_and_shape_inference_function()) {
    if (schema->HasFunction() && schema->GetFunction()) inferThroughFunction(n, *schema->GetFunction(), inputsKnown);
    return;
  }
  // libonnx's inference functions index the inputs and outputs the schema promises without checking (a Relu without
  // an output dereferences a null output type): a node of the wrong arity is reported, never handed over.
  if (n.numInputs() < size_t(schema->min_input()) || n.numInputs() > size_t(schema->max_input()) ||
      n.numOutputs() < size_t(schema->min_output()) || n.numOutputs() > size_t(schema->max_output())) {
    ++report_.nodesFailed;
    warn(nodeLabel(n) + ": not inferred: " + std::to_string(n.numInputs()) + " inputs and " +
         std::to_string(n.numOutputs()) + " outputs, where " + n.opType() + " takes " +
         std::to_string(schema->min_input()) + ".." + std::to_string(schema->max_input()) + " inputs and " +
         std::to_string(schema->min_output()) + ".." + std::to_string(schema->max_output()) + " outputs");
    return;
  }
  NodeContext ctx(*this, n);
  try {
    schema->GetTypeAndShapeInferenceFunction()(ctx);
  } catch (const std::exception& e) {
    ++report_.nodesFailed;
    // When an input type was already unknown, the failure is a consequence, not news.
    if (inputsKnown) {
      std::string msg = e.what();
      if (auto nl = msg.find('\n'); nl != std::string::npos) msg.resize(nl);
      warn(nodeLabel(n) + ": inference failed: " + msg);
    }
    refineFromPropagatedShape(n);  // our own rules may still know the shape
    if (n.numOutputs() == 1 && n.output(0) && !propagated_.count(n.output(0))) propagateExtra(n);
    return;
  }
  ++report_.nodesInferred;
  ctx.commit(*this);
  refineFromPropagatedShape(n);
  if (schema->has_data_propagation_function() && inputsKnown) {
    PropagationContext pctx(*this, n, ctx);
    try {
      schema->GetDataPropagationFunction()(pctx);
    } catch (const std::exception&) {
      // Propagation is best effort: missing facts only mean less precise shapes downstream.
    }
  }
  if (n.numOutputs() == 1 && n.output(0) && !propagated_.count(n.output(0))) propagateExtra(n);
}

// libonnx 1.12 turns every sliced symbolic dim into an unknown one, even when the slice keeps the whole axis
// (start 0, end past the end, step 1), and gives up entirely (not even a rank) when starts/ends are computed.
// Exports slice masks with computed bounds (bias[:, :, past_len:past_len+1, :past_len+1]). Rebuilds the shape:
// rank from the input, unsliced axes kept, whole-axis slices keep their symbol, and bounds over the same symbol
// (sym+a .. sym+b, step 1) give a static length b-a — assuming in-range bounds, as symbolic inference tools do.
void refineSlice(Node& n, Session& s) {
  Value* out = n.output(0);
  const Value* x = n.input(0);
  if (!out || !x || !x->type().shape.rankKnown() || n.numInputs() < 3) return;
  if (out->type().shape.rankKnown() && out->type().shape.rank() != x->type().shape.rank()) return;
  using DimProto = onnx::TensorShapeProto_Dimension;
  auto vec = [&](size_t i) -> std::optional<std::vector<DimProto>> {
    const onnx::TensorShapeProto* p = s.propagatedOf(n.input(i));
    if (!p) return std::nullopt;
    return std::vector<DimProto>(p->dim().begin(), p->dim().end());
  };
  auto starts = vec(1), ends = vec(2);
  if (!starts || !ends || starts->size() != ends->size()) return;
  std::vector<int64_t> axes, steps;
  for (size_t i = 0; i < starts->size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (n.input(3)) {
    auto a = vec(3);
    if (!a || a->size() != starts->size()) return;
    for (size_t i = 0; i < a->size(); ++i) {
      if (!(*a)[i].has_dim_value()) return;
      axes[i] = (*a)[i].dim_value();
    }
  }
  steps.assign(starts->size(), 1);
  if (n.input(4)) {
    auto st = vec(4);
    if (!st || st->size() != starts->size()) return;
    for (size_t i = 0; i < st->size(); ++i) {
      if (!(*st)[i].has_dim_value()) return;
      steps[i] = (*st)[i].dim_value();
    }
  }
  const int64_t rank = static_cast<int64_t>(x->type().shape.rank());
  ValueType t = out->type();
  if (!t.shape.rankKnown()) {
    t.kind = ValueType::Kind::Tensor;
    if (t.dtype == DType::Undefined) t.dtype = x->type().dtype;
    t.shape = Shape(std::vector<Dim>(static_cast<size_t>(rank), Dim::unknown()));
  }
  std::vector<bool> sliced(static_cast<size_t>(rank), false);
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (axis < 0 || axis >= rank) return;
    sliced[static_cast<size_t>(axis)] = true;
    const Dim& in = x->type().shape[static_cast<size_t>(axis)];
    Dim& o = t.shape.dims()[static_cast<size_t>(axis)];
    if (o.isStatic() || o.isSymbolic()) continue;
    const auto b = parseLinear((*starts)[i]), e = parseLinear((*ends)[i]);
    if (!b || !e || steps[i] != 1) continue;
    if (b->symbol.empty() && b->offset == 0 && e->symbol.empty() && e->offset >= (int64_t(1) << 31) && in.isSymbolic())
      o = in;  // the whole axis
    else if (!b->symbol.empty() && b->symbol == e->symbol)
      o = Dim::fixed(std::max<int64_t>(0, e->offset - b->offset));
  }
  for (int64_t a = 0; a < rank; ++a) {
    Dim& o = t.shape.dims()[static_cast<size_t>(a)];
    if (!sliced[static_cast<size_t>(a)] && !o.isStatic() && !o.isSymbolic()) o = x->type().shape[static_cast<size_t>(a)];
  }
  if (!(t == out->type())) s.setType(out, t);
}

void Session::refineFromPropagatedShape(Node& n) {
  if (!n.domain().empty() || n.numOutputs() != 1 || !n.output(0)) return;
  const std::string& op = n.opType();
  if (op == "Slice") {
    refineSlice(n, *this);
    return;
  }
  if (op == "Concat") {
    // libonnx adds concatenated extents only when all are static; seq_len + 1 (a KV cache plus the new token) is
    // kept as the linear symbol "seq_len+1".
    Value* out = n.output(0);
    if (!out->type().shape.rankKnown()) return;
    const int64_t rank = static_cast<int64_t>(out->type().shape.rank());
    int64_t axis = n.attrInt("axis", 0);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank || out->type().shape[static_cast<size_t>(axis)].isStatic()) return;
    LinearDim sum;
    for (const Value* in : n.inputs()) {
      if (!in || !in->type().shape.rankKnown() || static_cast<int64_t>(in->type().shape.rank()) != rank) return;
      const Dim& d = in->type().shape[static_cast<size_t>(axis)];
      onnx::TensorShapeProto_Dimension p;
      if (d.isStatic()) p.set_dim_value(d.value);
      else if (d.isSymbolic()) p.set_dim_param(d.symbol);
      else return;
      auto l = parseLinear(p);
      if (!l || (!l->symbol.empty() && !sum.symbol.empty())) return;  // at most one symbol
      if (!l->symbol.empty()) sum.symbol = l->symbol;
      sum.offset += l->offset;
    }
    const auto f = formatLinear(sum);
    ValueType t = out->type();
    t.shape.dims()[static_cast<size_t>(axis)] = f.has_dim_value() ? Dim::fixed(f.dim_value()) : Dim::symbolic(f.dim_param());
    setType(out, t);
    return;
  }
  if (op == "Range") {
    // Range(start, limit, delta) over the same symbol (past_len, past_len + k, 1) has a static length.
    const onnx::TensorShapeProto* a = propagatedOf(n.input(0));
    const onnx::TensorShapeProto* b = propagatedOf(n.input(1));
    auto delta = knownInts(n.input(2));
    if (!a || !b || !delta || a->dim_size() != 1 || b->dim_size() != 1 || delta->size() != 1 || (*delta)[0] == 0)
      return;
    auto x = parseLinear(a->dim(0)), y = parseLinear(b->dim(0));
    if (!x || !y || x->symbol != y->symbol || x->symbol.empty()) return;
    const int64_t d = (*delta)[0], span = y->offset - x->offset;
    const int64_t len = std::max<int64_t>(0, (span + (d > 0 ? d - 1 : d + 1)) / d);
    ValueType t = n.output(0)->type();
    t.shape = Shape({Dim::fixed(len)});
    setType(n.output(0), t);
    return;
  }
  const bool reshape = op == "Reshape", expand = op == "Expand", fill = op == "ConstantOfShape";
  if (!reshape && !expand && !fill) return;
  Value* out = n.output(0);
  if (out->type().shape.rankKnown() && !(reshape && !out->type().shape.isStatic())) return;
  const onnx::TensorShapeProto* target = propagatedOf(n.input(fill ? 0 : 1));
  if (!target) return;
  const Value* data = fill ? nullptr : n.input(0);
  const Shape in = data ? data->type().shape : Shape();
  std::vector<Dim> dims;
  int minusOne = -1;
  for (int i = 0; i < target->dim_size(); ++i) {
    const auto& d = target->dim(i);
    if (d.has_dim_value()) {
      const int64_t v = d.dim_value();
      if (reshape && v == 0 && n.attrInt("allowzero", 0) == 0) {
        if (!in.rankKnown() || static_cast<size_t>(i) >= in.rank()) return;
        dims.push_back(in[static_cast<size_t>(i)]);  // 0 copies the input's dim
      } else if (reshape && v == -1) {
        if (minusOne >= 0) return;
        minusOne = i;
        dims.push_back(Dim::unknown());
      } else if (v < 0) {
        return;
      } else {
        dims.push_back(Dim::fixed(v));
      }
    } else if (d.has_dim_param() && !d.dim_param().empty()) {
      dims.push_back(Dim::symbolic(d.dim_param()));
    } else {
      dims.push_back(Dim::unknown());
    }
  }
  if (reshape && minusOne >= 0) {
    // -1 is the input's element count over the other target dims. Both are products of a static factor and named
    // symbols ([batch_size, 1] -> [-1, 1] gives batch_size); solvable when the symbols cancel down to at most one.
    struct Product {
      int64_t coeff = 1;
      std::multiset<std::string> symbols;
      bool ok = true;
    };
    auto multiply = [](Product& p, const Dim& d) {
      if (d.isStatic()) p.coeff *= d.value;
      else if (d.isSymbolic()) p.symbols.insert(d.symbol);
      else p.ok = false;
    };
    Product whole, others;
    if (!in.rankKnown()) return;
    for (const Dim& d : in.dims()) multiply(whole, d);
    for (size_t i = 0; i < dims.size(); ++i)
      if (static_cast<int>(i) != minusOne) multiply(others, dims[i]);
    if (whole.ok && others.ok && others.coeff > 0 && whole.coeff % others.coeff == 0) {
      bool divisible = true;
      for (const std::string& sym : others.symbols) {
        auto it = whole.symbols.find(sym);
        if (it == whole.symbols.end()) divisible = false;
        else whole.symbols.erase(it);
      }
      const int64_t rest = whole.coeff / others.coeff;
      if (divisible && whole.symbols.empty()) dims[static_cast<size_t>(minusOne)] = Dim::fixed(rest);
      else if (divisible && whole.symbols.size() == 1 && rest == 1)
        dims[static_cast<size_t>(minusOne)] = Dim::symbolic(*whole.symbols.begin());
    }
  }
  if (expand) {
    // Numpy broadcasting of the input shape against the target.
    if (!in.rankKnown()) return;
    const size_t rank = std::max(in.rank(), dims.size());
    std::vector<Dim> b(rank);
    for (size_t i = 0; i < rank; ++i) {
      const Dim* x = i + in.rank() >= rank ? &in[i + in.rank() - rank] : nullptr;
      const Dim* y = i + dims.size() >= rank ? &dims[i + dims.size() - rank] : nullptr;
      if (x && y) b[i] = (x->isStatic() && x->value == 1) ? *y : (y->isStatic() && y->value == 1) ? *x : (x->isStatic() ? *x : *y);
      else b[i] = x ? *x : *y;
    }
    dims = std::move(b);
  }
  ValueType t = out->type();
  if (!t.known()) {
    t.kind = ValueType::Kind::Tensor;
    t.dtype = fill ? DType::Float : (data ? data->type().dtype : DType::Undefined);
  }
  t.shape = mergeTypes(ValueType::tensor(t.dtype, out->type().shape), ValueType::tensor(t.dtype, Shape(dims)), nullptr).shape;
  setType(out, t);
}

void Session::propagateExtra(Node& n) {
  if (!n.domain().empty() || n.numOutputs() != 1 || !n.output(0)) return;
  const std::string& op = n.opType();
  const int64_t cap = 4096;  // shape vectors are short; anything longer is data, not a shape
  using DimProto = onnx::TensorShapeProto_Dimension;
  // Known elements of a small integer vector: static values or named symbols (unknown entries allowed).
  auto elems = [&](const Value* v) -> std::optional<std::vector<DimProto>> {
    const onnx::TensorShapeProto* p = propagatedOf(v);
    if (!p) return std::nullopt;
    return std::vector<DimProto>(p->dim().begin(), p->dim().end());
  };
  auto emit = [&](const std::vector<DimProto>& dims) {
    if (static_cast<int64_t>(dims.size()) > cap) return;
    onnx::TensorShapeProto out;
    for (const DimProto& d : dims) *out.add_dim() = d;
    setPropagated(n.output(0), std::move(out));
  };
  auto fixed = [](int64_t v) {
    DimProto d;
    d.set_dim_value(v);
    return d;
  };
  auto emitInts = [&](const std::vector<int64_t>& vals) {
    std::vector<DimProto> dims;
    for (int64_t x : vals) dims.push_back(fixed(x));
    emit(dims);
  };
  const bool scalarOut = n.output(0)->type().shape.rankKnown() && n.output(0)->type().shape.rank() == 0;

  // Cast passes the (integer) values through; exports round-trip shape values via float (int(x / 2)).
  if (op == "Unsqueeze" || op == "Squeeze" || op == "Identity" || op == "Cast") {
    // Rank changes between scalar and one-element vector do not change the values.
    auto a = elems(n.input(0));
    if (a && (op != "Squeeze" || a->size() == 1 || !scalarOut)) emit(*a);
  } else if (op == "Concat") {
    std::vector<DimProto> all;
    for (const Value* in : n.inputs()) {
      auto a = elems(in);
      if (!a) return;
      all.insert(all.end(), a->begin(), a->end());
    }
    emit(all);
  } else if (op == "Gather") {
    auto data = elems(n.input(0));
    auto idx = knownInts(n.input(1));
    if (!data || !idx || n.attrInt("axis", 0) != 0) return;
    std::vector<DimProto> picked;
    for (int64_t i : *idx) {
      if (i < 0) i += static_cast<int64_t>(data->size());
      if (i < 0 || i >= static_cast<int64_t>(data->size())) return;
      picked.push_back((*data)[static_cast<size_t>(i)]);
    }
    emit(picked);
  } else if (op == "Slice" && n.numInputs() >= 3) {
    // 1-D slices of shape vectors (opset 10+ form, inputs data/starts/ends[/axes/steps]).
    auto data = elems(n.input(0));
    auto st = knownInts(n.input(1)), en = knownInts(n.input(2));
    if (!data || !st || !en || st->size() != 1 || en->size() != 1) return;
    int64_t step = 1;
    if (n.input(4)) {
      auto sp = knownInts(n.input(4));
      if (!sp || sp->size() != 1 || (*sp)[0] == 0) return;
      step = (*sp)[0];
    }
    const int64_t len = static_cast<int64_t>(data->size());
    auto clampIndex = [&](int64_t i, int64_t lo, int64_t hi) {
      if (i < 0) i += len;
      return std::max(lo, std::min(hi, i));
    };
    const int64_t b = step > 0 ? clampIndex((*st)[0], 0, len) : clampIndex((*st)[0], -1, len - 1);
    const int64_t e = step > 0 ? clampIndex((*en)[0], 0, len) : clampIndex((*en)[0], -1, len - 1);
    std::vector<DimProto> picked;
    for (int64_t i = b; step > 0 ? i < e : i > e; i += step) picked.push_back((*data)[static_cast<size_t>(i)]);
    emit(picked);
  } else if (op == "ConstantOfShape") {
    auto shape = knownInts(n.input(0));
    const Attribute* a = n.attr("value");
    if (!shape || shape->size() != 1 || (*shape)[0] < 0 || (*shape)[0] > cap || !a) return;
    const Tensor* t = a->get<Tensor>();  // the default fill is float 0: not an integer vector
    if (!t || !isInteger(t->dtype()) || t->numel() != 1) return;
    emitInts(std::vector<int64_t>(static_cast<size_t>((*shape)[0]), t->toInt64()[0]));
  } else if (op == "Range") {
    auto a = knownInts(n.input(0)), b = knownInts(n.input(1)), c = knownInts(n.input(2));
    if (!a || !b || !c || a->size() != 1 || b->size() != 1 || c->size() != 1 || (*c)[0] == 0) return;
    std::vector<int64_t> vals;
    for (int64_t x = (*a)[0]; ((*c)[0] > 0 ? x < (*b)[0] : x > (*b)[0]) && static_cast<int64_t>(vals.size()) <= cap;
         x += (*c)[0])
      vals.push_back(x);
    emitInts(vals);
  } else if (op == "Neg" || op == "Abs") {
    auto a = knownInts(n.input(0));
    if (!a) return;
    for (int64_t& x : *a) x = op == "Neg" ? -x : (x < 0 ? -x : x);
    emitInts(*a);
  } else if ((op == "Add" || op == "Sub") && isInteger(n.output(0)->type().dtype) && n.numInputs() == 2 &&
             (!knownInts(n.input(0)) || !knownInts(n.input(1)))) {
    // sym + k, sym - k, (sym + a) - (sym + b): single-element shape arithmetic over one symbol.
    auto a = elems(n.input(0)), b = elems(n.input(1));
    if (!a || !b || a->size() != 1 || b->size() != 1) return;
    auto x = parseLinear((*a)[0]), y = parseLinear((*b)[0]);
    if (!x || !y) return;
    LinearDim r;
    if (op == "Add" && (x->symbol.empty() || y->symbol.empty())) {
      r = {x->symbol.empty() ? y->symbol : x->symbol, x->offset + y->offset};
    } else if (op == "Sub" && y->symbol.empty()) {
      r = {x->symbol, x->offset - y->offset};
    } else if (op == "Sub" && x->symbol == y->symbol) {
      r = {{}, x->offset - y->offset};
    } else {
      return;
    }
    emit({formatLinear(r)});
  } else if (op == "Div" || op == "Max" || op == "Min" || op == "Mod" || op == "Mul" || op == "Add" || op == "Sub") {
    if (!isInteger(n.output(0)->type().dtype) || n.numInputs() != 2) return;
    auto a = knownInts(n.input(0)), b = knownInts(n.input(1));
    if (!a || !b || (a->size() != b->size() && a->size() != 1 && b->size() != 1)) return;
    const size_t len = std::max(a->size(), b->size());
    std::vector<int64_t> vals(len);
    for (size_t i = 0; i < len; ++i) {
      const int64_t x = (*a)[a->size() == 1 ? 0 : i], y = (*b)[b->size() == 1 ? 0 : i];
      if ((op == "Div" || op == "Mod") && y == 0) return;
      vals[i] = op == "Div" ? x / y : op == "Mod" ? x % y : op == "Max" ? std::max(x, y) : op == "Min" ? std::min(x, y)
              : op == "Mul" ? x * y : op == "Add" ? x + y : x - y;
    }
    emitInts(vals);
  }
}

}  // namespace

InferenceReport inferShapes(Graph& graph, const std::map<std::string, int64_t>& opsets,
                            const InferenceOptions& options) {
  InferenceReport report;
  Session session(opsets, options, report);
  session.inferGraph(graph, options.order);
  return report;
}

InferenceReport inferShapes(Model& model, const InferenceOptions& options) {
  InferenceReport report;
  Session session(model.opsets, options, report);
  session.addLocalFunctions(model.functionProtos);
  session.inferGraph(*model.graph, options.order);
  return report;
}

}  // namespace kiln
