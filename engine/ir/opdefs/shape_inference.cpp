#include "ir/opdefs/shape_inference.h"

#include <google/protobuf/arena.h>
#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>
#include <onnx/shape_inference/implementation.h>

#include <memory>
#include <unordered_map>

#include "io/onnx/proto_convert.h"
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

  void inferGraph(Graph& g) {
    auto order = g.topologicalOrder();
    std::vector<Node*> nodes = order ? *order : std::vector<Node*>(g.nodes().begin(), g.nodes().end());
    for (Node* n : nodes) inferNode(*n);
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
    ++report_.unknownOps[n.qualifiedType()];
    // Subgraphs of unknown ops still get their own nodes inferred.
    for (Graph* sg : n.subgraphs()) inferGraph(*sg);
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
    return;
  }
  ++report_.nodesInferred;
  ctx.commit(*this);
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

void Session::propagateExtra(Node& n) {
  if (!n.domain().empty() || n.numOutputs() != 1 || !n.output(0)) return;
  const std::string& op = n.opType();
  const int64_t cap = 4096;  // shape vectors are short; anything longer is data, not a shape
  onnx::TensorShapeProto out;
  auto emit = [&](const std::vector<int64_t>& vals) {
    if (static_cast<int64_t>(vals.size()) > cap) return;
    for (int64_t x : vals) out.add_dim()->set_dim_value(x);
    setPropagated(n.output(0), std::move(out));
  };
  if (op == "ConstantOfShape") {
    auto shape = knownInts(n.input(0));
    if (!shape || shape->size() != 1 || (*shape)[0] < 0 || (*shape)[0] > cap) return;
    int64_t fill = 0;
    if (const Attribute* a = n.attr("value")) {
      const Tensor* t = a->get<Tensor>();
      if (!t || !isInteger(t->dtype()) || t->numel() != 1) return;
      fill = t->toInt64()[0];
    } else if (!isInteger(n.output(0)->type().dtype) && n.output(0)->type().dtype != DType::Float) {
      return;
    }
    if (n.attr("value") == nullptr) return;  // default fill is float 0, not an integer vector
    emit(std::vector<int64_t>(static_cast<size_t>((*shape)[0]), fill));
  } else if (op == "Range") {
    auto a = knownInts(n.input(0)), b = knownInts(n.input(1)), c = knownInts(n.input(2));
    if (!a || !b || !c || a->size() != 1 || b->size() != 1 || c->size() != 1 || (*c)[0] == 0) return;
    std::vector<int64_t> vals;
    for (int64_t x = (*a)[0]; ((*c)[0] > 0 ? x < (*b)[0] : x > (*b)[0]) && static_cast<int64_t>(vals.size()) <= cap;
         x += (*c)[0])
      vals.push_back(x);
    emit(vals);
  } else if (op == "Concat") {
    std::vector<int64_t> vals;
    for (const Value* in : n.inputs()) {
      auto a = knownInts(in);
      if (!a) return;
      vals.insert(vals.end(), a->begin(), a->end());
    }
    emit(vals);
  } else if (op == "Slice" && n.numInputs() >= 3) {
    // 1-D slices of shape vectors (opset 10+ form, inputs data/starts/ends[/axes/steps]).
    auto data = knownInts(n.input(0)), st = knownInts(n.input(1)), en = knownInts(n.input(2));
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
    std::vector<int64_t> vals;
    for (int64_t i = b; step > 0 ? i < e : i > e; i += step) vals.push_back((*data)[static_cast<size_t>(i)]);
    emit(vals);
  } else if (op == "Neg" || op == "Abs") {
    auto a = knownInts(n.input(0));
    if (!a) return;
    for (int64_t& x : *a) x = op == "Neg" ? -x : (x < 0 ? -x : x);
    emit(*a);
  } else if (op == "Div" || op == "Max" || op == "Min" || op == "Mod") {
    if (!isInteger(n.output(0)->type().dtype) || n.numInputs() != 2) return;
    auto a = knownInts(n.input(0)), b = knownInts(n.input(1));
    if (!a || !b || (a->size() != b->size() && a->size() != 1 && b->size() != 1)) return;
    const size_t len = std::max(a->size(), b->size());
    std::vector<int64_t> vals(len);
    for (size_t i = 0; i < len; ++i) {
      const int64_t x = (*a)[a->size() == 1 ? 0 : i], y = (*b)[b->size() == 1 ? 0 : i];
      if ((op == "Div" || op == "Mod") && y == 0) return;
      vals[i] = op == "Div" ? x / y : op == "Mod" ? x % y : op == "Max" ? std::max(x, y) : std::min(x, y);
    }
    emit(vals);
  }
}

}  // namespace

InferenceReport inferShapes(Graph& graph, const std::map<std::string, int64_t>& opsets,
                            const InferenceOptions& options) {
  InferenceReport report;
  Session session(opsets, options, report);
  session.inferGraph(graph);
  return report;
}

InferenceReport inferShapes(Model& model, const InferenceOptions& options) {
  InferenceReport report;
  Session session(model.opsets, options, report);
  session.addLocalFunctions(model.functionProtos);
  session.inferGraph(*model.graph);
  return report;
}

}  // namespace kiln
