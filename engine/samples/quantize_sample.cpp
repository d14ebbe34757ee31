#include "samples/quantize_sample.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "emulator/model_inputs.h"
#include "emulator/reference_executor.h"
#include "ir/opdefs/shape_inference.h"

namespace kiln::samples {
namespace {

// The nodes worth quantizing: float Conv / MatMul whose weight is a constant (the second input).
bool quantizable(const Node& n) {
  if (!n.domain().empty() || (n.opType() != "Conv" && n.opType() != "MatMul")) return false;
  const Value* x = n.input(0);
  const Value* w = n.input(1);
  if (!x || !w || !w->constant() || x->constant()) return false;
  if (w->constant()->dtype() != DType::Float || x->type().dtype != DType::Float) return false;
  const size_t rank = w->constant()->dims().size();
  return n.opType() == "Conv" ? rank >= 3 : rank == 2;
}

std::vector<int8_t> quantizeValues(const std::vector<double>& v, size_t begin, size_t end, double scale) {
  std::vector<int8_t> q;
  q.reserve(end - begin);
  for (size_t i = begin; i < end; ++i)
    q.push_back(static_cast<int8_t>(std::clamp(std::nearbyint(v[i] / scale), -127.0, 127.0)));
  return q;
}

double symmetricScale(const std::vector<double>& v, size_t begin, size_t end) {
  double m = 0;
  for (size_t i = begin; i < end; ++i) m = std::max(m, std::abs(v[i]));
  return m > 0 ? m / 127.0 : 1.0;
}

void copyConvAttributes(const Node& from, Node& to) {
  for (const NamedAttribute& a : from.attributes()) to.setAttr(a.name, a.value);
}

// The node `last` now computes what `n` computed: its readers (and the graph output) move over, and its output
// takes n's output name, as the quantization tool keeps tensor names at the boundary.
void takeOver(Graph& g, Node* n, Node* last) {
  Value* y = n->output(0);
  Value* out = last->output(0);
  const std::string name = y->name();
  ValueType type = y->type();
  g.replaceAllUsesWith(y, out);
  g.eraseNode(n);
  out->setName(name);
  out->setType(type);
}

class Quantizer {
 public:
  explicit Quantizer(Graph& g) : g_(g) {}

  void dynamic(Node* n) {
    Value* x = n->input(0);
    const Tensor& w = *n->input(1)->constant();
    const std::vector<double> wv = w.toDouble();
    const double ws = symmetricScale(wv, 0, wv.size());
    const std::string base = n->input(1)->name();
    Value* wq = g_.addInitializer(base + "_quantized", Tensor::fromVector(DType::Int8, w.dims(), quantizeValues(wv, 0, wv.size(), ws)));
    Value* wzp = g_.addInitializer(base + "_zero_point", Tensor::fromVector(DType::Int8, {}, std::vector<int8_t>{0}));
    Value* wsv = g_.addInitializer(base + "_scale", Tensor::fromVector(DType::Float, {}, std::vector<float>{float(ws)}));
    auto [xq, xs, xzp] = dynamicQuant(x, n);
    const std::string name = n->name().empty() ? n->output(0)->name() : n->name();
    const bool conv = n->opType() == "Conv";
    Node* integer = g_.addNode(conv ? "ConvInteger" : "MatMulInteger", {xq, wq, xzp, wzp},
                               {name + "_output_quantized"}, name + "_quant", "", n);
    if (conv) copyConvAttributes(*n, *integer);
    Node* cast = g_.addNode("Cast", {integer->output(0)}, {name + "_output_quantized_cast_output"},
                            name + "_output_quantized_cast", "", n);
    cast->setAttr("to", Attribute(int64_t{dtypeToOnnx(DType::Float)}));
    Node* scales = g_.addNode("Mul", {xs, wsv}, {name + "_scales_mul_output"}, name + "_scales_mul", "", n);
    Node* last = g_.addNode("Mul", {cast->output(0), scales->output(0)}, {name + "_output_quantized_mul_output"},
                            name + "_output_quantized_mul", "", n);
    if (Value* b = n->input(2); conv && b && b->constant()) {
      // ConvInteger has no bias: ORT adds it after the scale, shaped to broadcast over the channels.
      std::vector<int64_t> dims{b->constant()->dims().empty() ? 1 : b->constant()->dims()[0]};
      for (size_t i = 2; i < w.dims().size(); ++i) dims.push_back(1);
      Value* bias = g_.addInitializer(b->name() + "_reshaped",
                                      Tensor::fromBytes(DType::Float, dims, std::string(b->constant()->bytes().begin(),
                                                                                         b->constant()->bytes().end())));
      last = g_.addNode("Add", {last->output(0), bias}, {name + "_bias_add_output"}, name + "_bias_add", "", n);
    }
    takeOver(g_, n, last);
  }

  void qdq(Node* n, double activationScale) {
    Value* x = n->input(0);
    const Tensor& w = *n->input(1)->constant();
    const std::vector<double> wv = w.toDouble();
    const bool conv = n->opType() == "Conv";
    const std::string base = n->input(1)->name();
    // Conv weights per output channel (axis 0), MatMul weights per tensor: the tool's defaults.
    const int64_t channels = conv ? w.dims()[0] : 1;
    const size_t per = wv.size() / size_t(std::max<int64_t>(channels, 1));
    std::vector<int8_t> q;
    std::vector<float> scales;
    for (int64_t c = 0; c < channels; ++c) {
      const double s = symmetricScale(wv, size_t(c) * per, size_t(c + 1) * per);
      scales.push_back(float(s));
      const std::vector<int8_t> part = quantizeValues(wv, size_t(c) * per, size_t(c + 1) * per, s);
      q.insert(q.end(), part.begin(), part.end());
    }
    std::vector<int64_t> scaleDims = conv ? std::vector<int64_t>{channels} : std::vector<int64_t>{};
    Value* wq = g_.addInitializer(base + "_quantized", Tensor::fromVector(DType::Int8, w.dims(), q));
    Value* wsv = g_.addInitializer(base + "_scale", Tensor::fromVector(DType::Float, scaleDims, scales));
    Value* wzp = g_.addInitializer(base + "_zero_point",
                                   Tensor::fromVector(DType::Int8, scaleDims, std::vector<int8_t>(scales.size(), 0)));
    Node* wdq = g_.addNode("DequantizeLinear", {wq, wsv, wzp}, {base + "_DequantizeLinear_Output"},
                           base + "_DequantizeLinear", "", n);
    if (conv) wdq->setAttr("axis", Attribute(int64_t{0}));
    Value* xdq = activationQdq(x, activationScale, n);
    g_.setNodeInput(n, 0, xdq);
    g_.setNodeInput(n, 1, wdq->output(0));
  }

 private:
  struct Quantized {
    Value *q, *scale, *zeroPoint;
  };

  // One DynamicQuantizeLinear per activation, shared by every node that reads it.
  Quantized dynamicQuant(Value* x, Node* before) {
    if (auto it = dynamic_.find(x); it != dynamic_.end()) return it->second;
    Node* d = g_.addNode("DynamicQuantizeLinear", {x},
                         {x->name() + "_quantized", x->name() + "_scale", x->name() + "_zero_point"},
                         x->name() + "_QuantizeLinear", "", before);
    const Quantized q{d->output(0), d->output(1), d->output(2)};
    dynamic_[x] = q;
    return q;
  }

  Value* activationQdq(Value* x, double scale, Node* before) {
    if (auto it = qdq_.find(x); it != qdq_.end()) return it->second;
    Value* s = g_.addInitializer(x->name() + "_scale", Tensor::fromVector(DType::Float, {}, std::vector<float>{float(scale)}));
    Value* zp = g_.addInitializer(x->name() + "_zero_point", Tensor::fromVector(DType::Int8, {}, std::vector<int8_t>{0}));
    Node* q = g_.addNode("QuantizeLinear", {x, s, zp}, {x->name() + "_QuantizeLinear_Output"},
                         x->name() + "_QuantizeLinear", "", before);
    Node* dq = g_.addNode("DequantizeLinear", {q->output(0), s, zp}, {x->name() + "_DequantizeLinear_Output"},
                          x->name() + "_DequantizeLinear", "", before);
    qdq_[x] = dq->output(0);
    return dq->output(0);
  }

  Graph& g_;
  std::map<Value*, Quantized> dynamic_;
  std::map<Value*, Value*> qdq_;
};

// max |x| / 127 of each activation feeding a quantizable node, from one reference run on seeded random inputs
// (the static tool calibrates on data; the samples have none but their own).
std::map<Value*, double> calibrate(Model& model, const std::vector<Node*>& nodes) {
  Graph& g = *model.graph;
  const std::vector<Value*> outputs = g.outputs();
  std::vector<Value*> probes;
  for (Node* n : nodes)
    if (std::find(probes.begin(), probes.end(), n->input(0)) == probes.end()) probes.push_back(n->input(0));
  std::vector<Value*> all = outputs;
  all.insert(all.end(), probes.begin(), probes.end());
  g.setOutputs(all);
  std::map<std::string, int64_t> dims;
  for (const SymbolSite& s : inputSymbols(g)) dims[s.symbol] = DimPolicy{}.valueFor(s.role);
  std::vector<Tensor> results;
  try {
    ExecutionOptions options;
    options.opset = model.opsetFor("");
    results = ReferenceExecutor(options).run(g, randomInputs(g, 1, dims));
  } catch (...) {
    g.setOutputs(outputs);
    throw;
  }
  g.setOutputs(outputs);
  std::map<Value*, double> scale;
  for (size_t i = 0; i < probes.size(); ++i) {
    const std::vector<double> v = results[outputs.size() + i].toDouble();
    scale[probes[i]] = symmetricScale(v, 0, v.size());
  }
  return scale;
}

}  // namespace

Quantization parseQuantization(const std::string& name) {
  if (name.empty() || name == "none") return Quantization::None;
  if (name == "dynamic") return Quantization::Dynamic;
  if (name == "qdq") return Quantization::Qdq;
  throw std::invalid_argument("--quantize takes dynamic or qdq, not '" + name + "'");
}

int quantizeModel(Model& model, Quantization q) {
  if (q == Quantization::None) return 0;
  Graph& g = *model.graph;
  std::vector<Node*> nodes;
  for (Node* n : g.nodes())
    if (quantizable(*n)) nodes.push_back(n);
  std::map<Value*, double> activationScale;
  if (q == Quantization::Qdq) activationScale = calibrate(model, nodes);
  Quantizer quantizer(g);
  for (Node* n : nodes) {
    if (q == Quantization::Dynamic) quantizer.dynamic(n);
    else quantizer.qdq(n, activationScale.at(n->input(0)));
  }
  // Weights no node reads any more (the float originals) leave the file.
  for (Value* v : g.initializers())
    if (!v->hasUses() && !v->isGraphOutput() && !v->isGraphInput()) g.eraseValue(v);
  model.opsets[""] = std::max<int64_t>(model.opsetFor(""), 13);  // per-axis DequantizeLinear
  inferShapes(model);
  return static_cast<int>(nodes.size());
}

}  // namespace kiln::samples
