#include "kernels/ge/ge_lowering.h"

#include <algorithm>

#include "ir/dtype.h"
#include "kernels/ge/ge_lowering_context.h"
#include "kernels/kernel.h"

namespace kiln::geops {

NamedAttribute intAttr(const std::string& name, int64_t v) { return {name, Attribute(v)}; }
NamedAttribute floatAttr(const std::string& name, float v) { return {name, Attribute(v)}; }
NamedAttribute intsAttr(const std::string& name, std::vector<int64_t> v) { return {name, Attribute(std::move(v))}; }
NamedAttribute stringAttr(const std::string& name, std::string v) { return {name, Attribute(std::move(v))}; }

namespace {

bool isConstOp(const Node* n) { return n && (n->opType() == "Const" || n->opType() == "Constant"); }

const LoweringTable& table() {
  static const LoweringTable t = [] {
    LoweringTable x;
    addNnLowerings(x);
    addTensorLowerings(x);
    addMathLowerings(x);
    return x;
  }();
  return t;
}

// "1024,weight,-" -> {"1024", "weight", "-"}
std::vector<std::string> memItems(const Node& n) {
  std::vector<std::string> items;
  const std::string text = n.annotation("mem.out");
  size_t start = 0;
  while (!text.empty() && start <= text.size()) {
    const size_t comma = text.find(',', start);
    items.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return items;
}

class GraphLowering {
 public:
  GraphLowering(const LoweringOptions& options, LoweredModel& out) : options_(options), out_(out) {}

  void lower(const Graph& ge, Graph& twin) {
    twin.setName(ge.name());
    for (const Value* in : ge.inputs()) {
      if (const Tensor* c = in->constant()) values_[in] = twin.addInitializer(in->name(), promoted(*c));
      else values_[in] = twin.addInput(in->name(), twinType(in->type()));
      values_[in]->setType(twinType(in->type()));
    }
    for (const Value* v : ge.initializers())
      if (!values_.count(v)) values_[v] = twin.addInitializer(v->name(), promoted(*v->constant()));
    for (const Node* n : ge.nodes()) lowerNode(*n, twin);
    std::vector<Value*> outs;
    for (const Value* v : ge.outputs()) {
      auto it = values_.find(v);
      if (it == values_.end()) return;  // an op before it could not run: listed already
      outs.push_back(it->second);
    }
    twin.setOutputs(outs);
  }

 private:
  ValueType twinType(const ValueType& t) const {
    ValueType x = t;
    if (options_.promoteFloat16 && x.dtype == DType::Float16) x.dtype = DType::Float;
    return x;
  }
  Tensor promoted(const Tensor& t) const {
    if (options_.promoteFloat16 && t.dtype() == DType::Float16) return convertTensor(t, DType::Float);
    return t;
  }

  void issue(const Node& n, const std::string& why) { out_.issues.push_back({n.name(), n.opType(), why}); }

  void lowerNode(const Node& n, Graph& twin) {
    for (const Value* v : n.inputs())
      if (v && !values_.count(v)) return;  // fed by an op that cannot run: that one is listed
    if (isConstOp(&n)) return lowerConst(n, twin);
    const Attribute* kilnType = n.attr("_kiln.op_type");
    if (kilnType && kilnType->get<std::string>()) return lowerKilnOp(n, *kilnType->get<std::string>(), twin);
    auto fn = table().find(n.opType());
    if (fn == table().end()) {
      issue(n, n.subgraphs().empty() ? "Kiln has no semantics for GE's " + n.opType()
                                     : "GE's control flow (" + n.opType() + " and its bodies) does not run here");
      return standIns(n, twin);
    }
    try {
      OpLowering op(twin, n, values_, options_, out_.inferred);
      fn->second(op);
      op.finish();
    } catch (const CannotLower& e) {
      issue(n, e.what());
      standIns(n, twin);
    }
  }

  // An op that cannot run still gets values for its outputs, so the ops after it are looked at too: the report
  // lists everything that keeps the graph from running, not only the first.
  void standIns(const Node& n, Graph& twin) {
    for (const Value* v : n.outputs())
      if (v && !values_.count(v)) values_[v] = twin.addInput(v->name(), twinType(v->type()));
  }

  void lowerConst(const Node& n, Graph& twin) {
    const Attribute* a = n.attr("value");
    const Tensor* t = a ? a->get<Tensor>() : nullptr;
    if (!t || !t->valid() || n.numOutputs() != 1 || !n.output(0)) {
      if (++dataless_ == 1)
        issue(n, "the file carries no data for this constant (a graph dump without weights, DUMP_GE_GRAPH=2 or 3, or "
                 "an om -> JSON): nothing can run without it");
      // A stand-in, so the ops after it are still looked at (what else would keep the graph from running).
      if (n.numOutputs() == 1 && n.output(0))
        values_[n.output(0)] = twin.addInput(n.output(0)->name(), twinType(n.output(0)->type()));
      return;
    }
    const Value* out = n.output(0);
    Value* v = twin.addInitializer(out->name(), promoted(*t));
    v->setType(twinType(out->type()));
    values_[out] = v;
  }

  // An op Kiln wrote: its own type and attributes again (bodies lowered the same way).
  void lowerKilnOp(const Node& n, const std::string& qualified, Graph& twin) {
    const size_t colon = qualified.find(':');
    const std::string domain = colon == std::string::npos ? "" : qualified.substr(0, colon);
    const std::string type = colon == std::string::npos ? qualified : qualified.substr(colon + 1);
    std::vector<Value*> ins;
    for (const Value* v : n.inputs()) ins.push_back(v ? values_.at(v) : nullptr);
    std::vector<std::string> names;
    for (const Value* v : n.outputs()) names.push_back(v ? v->name() : std::string());
    Node* t = twin.addNode(type, ins, names, n.name(), domain);
    for (const NamedAttribute& a : n.attributes()) {
      if (a.name.starts_with("_") || a.name.starts_with("raw.")) continue;
      std::vector<Attribute::GraphPtr> from;
      if (const auto* one = a.value.get<Attribute::GraphPtr>()) from.push_back(*one);
      if (const auto* list = a.value.get<std::vector<Attribute::GraphPtr>>()) from = *list;
      if (!from.empty()) {
        std::vector<Attribute::GraphPtr> bodies;
        for (const Attribute::GraphPtr& g : from) {
          auto body = twin.makeSubgraph(g->name());
          GraphLowering inner(options_, out_);
          inner.values_ = values_;  // a body may read values of the enclosing graph
          inner.lower(*g, *body);
          bodies.push_back(std::move(body));
        }
        if (a.value.get<Attribute::GraphPtr>()) t->setAttr(a.name, Attribute(std::move(bodies.front())));
        else t->setAttr(a.name, Attribute(std::move(bodies)));
        continue;
      }
      const int64_t* to = a.value.get<int64_t>();
      if (options_.promoteFloat16 && a.name == "to" && type.find("Cast") != std::string::npos && to &&
          *to == dtypeToOnnx(DType::Float16)) {
        t->setAttr(a.name, Attribute(int64_t(dtypeToOnnx(DType::Float))));  // a cast into fp16 stays in fp32
        continue;
      }
      t->setAttr(a.name, a.value);
    }
    for (size_t i = 0; i < n.numOutputs(); ++i)
      if (const Value* v = n.output(i)) {
        t->output(i)->setType(twinType(v->type()));
        values_[v] = t->output(i);
      }
    if (const std::string mem = n.annotation("mem.out"); !mem.empty()) t->setAnnotation("mem.out", mem);
  }

  const LoweringOptions& options_;
  LoweredModel& out_;
  std::unordered_map<const Value*, Value*> values_;
  int dataless_ = 0;
};

}  // namespace

OpLowering::OpLowering(Graph& twin, const Node& ge, std::unordered_map<const Value*, Value*>& values,
                       const LoweringOptions& options, std::vector<std::string>& inferred)
    : twin_(twin), ge_(ge), values_(values), options_(options), inferred_(inferred) {}

Value* OpLowering::input(size_t i) const {
  const Value* v = ge_.input(i);
  if (!v) return nullptr;
  auto it = values_.find(v);
  return it == values_.end() ? nullptr : it->second;
}

Value* OpLowering::required(size_t i) const {
  Value* v = input(i);
  if (!v) fail("input " + std::to_string(i) + " is missing");
  return v;
}

namespace {
std::vector<int64_t> logicalDims(const ValueType& t, const std::string& what, const OpLowering& op) {
  const Shape& s = isBlockedFormat(t.format) ? t.originShape : t.shape;
  const auto dims = s.staticExtents();
  if (!dims) op.fail(what + " has no static shape (" + s.toString() + ")");
  return *dims;
}
Format logicalFormat(const ValueType& t) { return isBlockedFormat(t.format) ? t.originFormat : t.format; }
}  // namespace

std::vector<int64_t> OpLowering::inputDims(size_t i) const {
  if (!ge_.input(i)) fail("input " + std::to_string(i) + " is missing");
  return logicalDims(ge_.input(i)->type(), "input " + std::to_string(i), *this);
}

std::vector<int64_t> OpLowering::outputDims(size_t i) const {
  if (!ge_.output(i)) fail("output " + std::to_string(i) + " is missing");
  return logicalDims(ge_.output(i)->type(), "output " + std::to_string(i), *this);
}

Format OpLowering::inputLayout(size_t i) const {
  return ge_.input(i) ? logicalFormat(ge_.input(i)->type()) : Format::ND;
}
Format OpLowering::outputLayout(size_t i) const {
  return ge_.output(i) ? logicalFormat(ge_.output(i)->type()) : Format::ND;
}

DType OpLowering::outputType(size_t i) const {
  if (!ge_.output(i)) fail("output " + std::to_string(i) + " is missing");
  return twinType(ge_.output(i)->type()).dtype;
}

bool OpLowering::isConstant(size_t i) const {
  const Value* v = ge_.input(i);
  return v && (v->constant() || isConstOp(v->producer()));
}

const Tensor* OpLowering::constInput(size_t i) const {
  const Value* v = ge_.input(i);
  if (!v) return nullptr;
  if (v->constant()) return v->constant();
  const Node* p = v->producer();
  if (!isConstOp(p)) return nullptr;
  const Attribute* a = p->attr("value");
  return a ? a->get<Tensor>() : nullptr;
}

std::vector<int64_t> OpLowering::constInts(size_t i) const {
  const Tensor* t = constInput(i);
  const Value* v = ge_.input(i);
  if (!t && v && isConstOp(v->producer()))
    fail("input " + std::to_string(i) + " is a constant the file carries no data for");
  if (!t || !t->valid() || !isInteger(t->dtype())) fail("input " + std::to_string(i) + " is not a constant integer tensor");
  return t->toInt64();
}

float OpLowering::attrFloat(const std::string& name, float fallback) const { return ge_.attrFloat(name, fallback); }

std::vector<std::string> OpLowering::fusedKernelOps() const {
  std::string kernel = ge_.annotation("om.kernel_name");
  if (kernel.empty())
    for (const NamedAttribute& a : ge_.attributes())
      if (const auto* s = a.value.get<std::string>(); s && a.name.ends_with("_kernelname") && s->starts_with("te_"))
        kernel = *s;
  const std::string prefix = "te_fused_op_";
  if (!kernel.starts_with(prefix)) return {};
  std::vector<std::string> words;
  size_t pos = prefix.size();
  while (pos < kernel.size()) {
    size_t us = kernel.find('_', pos);
    if (us == std::string::npos) us = kernel.size();
    words.push_back(kernel.substr(pos, us - pos));
    pos = us + 1;
  }
  // TBE's op names, some of them more than one word; the first word that is none of them is the kernel's hash.
  static const std::vector<std::vector<std::string>> known = {
      {"read", "select"}, {"write", "select"}, {"leaky", "relu"}, {"batch", "mat", "mul"}, {"mat", "mul"},
      {"depthwise", "conv2d"}, {"conv2d"},     {"matmul"},        {"matmulv2"},          {"relu6"},
      {"relu"},           {"eltwise"},         {"add"},           {"mul"},               {"sigmoid"},
      {"tanh"},           {"elu"},             {"swish"},         {"gelu"},              {"ascend", "dequant"},
      {"ascend", "quant"}, {"bias", "add"}};
  std::vector<std::string> ops;
  for (size_t w = 0; w < words.size();) {
    size_t matched = 0;
    for (const auto& k : known) {
      if (k.size() <= matched || w + k.size() > words.size()) continue;
      if (std::equal(k.begin(), k.end(), words.begin() + static_cast<std::ptrdiff_t>(w))) matched = k.size();
    }
    if (!matched) break;
    std::string op;
    for (size_t k = 0; k < matched; ++k) op += (k ? "_" : "") + words[w + k];
    ops.push_back(op == "mat_mul" ? "matmul" : op == "batch_mat_mul" ? "batch_matmul" : op);
    w += matched;
  }
  return ops;
}

ValueType OpLowering::twinType(const ValueType& t) const {
  ValueType x = t;
  if (options_.promoteFloat16 && x.dtype == DType::Float16) x.dtype = DType::Float;
  return x;
}

std::vector<Value*> OpLowering::addMany(const std::string& type, const std::vector<Value*>& inputs, size_t outputs,
                                        std::vector<NamedAttribute> attrs, const std::string& domain) {
  Node* n = twin_.addNode(type, inputs, outputs, ge_.name() + "/" + type + "_" + std::to_string(added_.size()), domain);
  for (NamedAttribute& a : attrs) n->setAttr(std::move(a.name), std::move(a.value));
  added_.push_back(n);
  return n->outputs();
}

Value* OpLowering::add(const std::string& type, const std::vector<Value*>& inputs, std::vector<NamedAttribute> attrs,
                       const std::string& domain) {
  return addMany(type, inputs, 1, std::move(attrs), domain)[0];
}

Value* OpLowering::constant(const Tensor& t) {
  return twin_.addInitializer(ge_.name() + "/const_" + std::to_string(twin_.initializers().size()), t);
}

Value* OpLowering::int64s(const std::vector<int64_t>& v) {
  return constant(Tensor::fromVector(DType::Int64, {int64_t(v.size())}, v));
}

Value* OpLowering::scalar(double v, DType t) {
  const Tensor d = Tensor::fromVector(DType::Double, {}, std::vector<double>{v});
  return constant(convertTensor(d, t));
}

Value* OpLowering::transpose(Value* v, const std::vector<int64_t>& perm) {
  return add("Transpose", {v}, {intsAttr("perm", perm)});
}

Value* OpLowering::reshape(Value* v, const std::vector<int64_t>& dims) { return add("Reshape", {v, int64s(dims)}); }

Value* OpLowering::relayout(Value* v, Format from, Format to) {
  if (from == to) return v;
  if (from == Format::NHWC && to == Format::NCHW) return transpose(v, {0, 3, 1, 2});
  if (from == Format::NCHW && to == Format::NHWC) return transpose(v, {0, 2, 3, 1});
  if (from == Format::HWCN && to == Format::NCHW) return transpose(v, {3, 2, 0, 1});
  if (from == Format::NHWC && to == Format::HWCN) return transpose(v, {1, 2, 3, 0});
  fail("no conversion from " + std::string(formatName(from)) + " to " + std::string(formatName(to)));
}

void OpLowering::result(size_t i, Value* v) {
  if (!v) fail("output " + std::to_string(i) + " was not computed");
  results_[i] = v;
}

void OpLowering::note(const std::string& what) { inferred_.push_back("op '" + ge_.name() + "' (" + ge_.opType() + "): " + what); }

void OpLowering::finish() {
  const std::vector<std::string> mem = memItems(ge_);
  std::map<Node*, std::map<size_t, std::string>> placed;  // twin node -> its output slot -> GE's offset item
  for (size_t i = 0; i < ge_.numOutputs(); ++i) {
    const Value* out = ge_.output(i);
    if (!out) continue;
    auto r = results_.find(i);
    if (r == results_.end()) fail("output " + std::to_string(i) + " was not computed");
    Value* v = r->second;
    // A value of this op's own making takes the GE output's identity; anything else (an input passed through, a
    // constant, a value already bound) is copied into it.
    const bool own = v->producer() && std::find(added_.begin(), added_.end(), v->producer()) != added_.end();
    if (!own || bound_.count(v)) v = add("Identity", {v});
    bound_.insert(v);
    v->setType(twinType(out->type()));
    v->setName(out->name());
    values_[out] = v;
    if (i < mem.size()) placed[v->producer()][v->producerIndex()] = mem[i];
  }
  for (auto& [node, slots] : placed) {
    std::string text;
    for (size_t k = 0; k < node->numOutputs(); ++k) text += (k ? "," : "") + (slots.count(k) ? slots[k] : "-");
    node->setAnnotation("mem.out", text);
  }
}

LoweredModel lowerGeModel(const Model& ge, const LoweringOptions& options) {
  LoweredModel out;
  auto twin = std::make_unique<Model>();
  twin->opsets = {{"", 17}, {"kiln", 1}};
  twin->sourcePath = ge.sourcePath;
  twin->producerName = "Kiln (GE graph lowered)";
  GraphLowering(options, out).lower(*ge.graph, *twin->graph);
  if (out.issues.empty()) out.model = std::move(twin);
  return out;
}

bool lowersGeType(const std::string& type) {
  return type == "Const" || type == "Constant" || table().count(type) > 0;
}

}  // namespace kiln::geops
