// Default cost estimates (FLOPs and bytes moved) from static shapes. Deliberately simple, documented formulas: the
// timing simulator turns them into cycles with a per-unit throughput; unknown shapes cost nothing rather than a guess.
#include <string_view>
#include <unordered_set>

#include "ir/graph.h"
#include "ir/opdefs/op_registry.h"

namespace kiln {
namespace {

double numelOf(const Value* v) {
  if (!v) return 0;
  auto n = v->type().shape.numel();
  return n ? static_cast<double>(*n) : 0;
}

double bytesOf(const Value* v) {
  if (!v) return 0;
  auto b = v->type().byteSize();
  return b ? static_cast<double>(*b) : 0;
}

std::optional<std::vector<int64_t>> extents(const Value* v) {
  if (!v) return std::nullopt;
  return v->type().shape.staticExtents();
}

// Transcendental ops cost several vector instructions per element.
const std::unordered_set<std::string_view>& heavyElementwise() {
  static const std::unordered_set<std::string_view> s = {
      "Exp", "Log", "Tanh", "Sigmoid", "Erf", "Gelu", "Softplus", "Softsign", "Sin", "Cos", "Tan", "Asin",
      "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Pow", "Sqrt", "Reciprocal", "HardSwish",
      "HardSigmoid", "Elu", "Selu", "Celu", "Mish", "ThresholdedRelu"};
  return s;
}

}  // namespace

bool hasOwnCostFormula(std::string_view op) {
  static const std::unordered_set<std::string_view> own = {
      "Conv", "ConvInteger", "QLinearConv", "ConvTranspose", "MatMul", "MatMulInteger", "Gemm", "QLinearMatMul",
      "WeightQuantMatMul",
      "LSTM", "GRU", "RNN", "MaxPool", "AveragePool", "LpPool", "GlobalAveragePool", "GlobalMaxPool", "ArgMax",
      "ArgMin", "Softmax", "LogSoftmax", "Hardmax", "BatchNormalization", "InstanceNormalization",
      "LayerNormalization", "GroupNormalization", "LRN", "MeanVarianceNormalization"};
  return own.count(op) || heavyElementwise().count(op) || op.rfind("Reduce", 0) == 0;
}

OpCost estimateCost(const Node& n) {
  OpCost c;
  for (const Value* v : n.inputs()) c.bytesRead += bytesOf(v);  // activations and weights alike
  for (const Value* v : n.outputs()) c.bytesWritten += bytesOf(v);
  const std::string_view op = n.opType();
  const double outNumel = n.numOutputs() ? numelOf(n.output(0)) : 0;

  if (op == "Conv" || op == "ConvInteger" || op == "QLinearConv") {
    // 2 · N·Cout·Hout·Wout · (Cin/group)·kh·kw = 2 · outNumel · weightNumel / Cout
    const size_t wi = op == "QLinearConv" ? 3 : 1;
    auto w = extents(n.input(wi));
    if (w && !w->empty() && (*w)[0] > 0) c.flops = 2.0 * outNumel * numelOf(n.input(wi)) / static_cast<double>((*w)[0]);
  } else if (op == "ConvTranspose") {
    // every input element is scattered through a Cout/group · kh · kw kernel
    auto w = extents(n.input(1));
    if (w && !w->empty() && (*w)[0] > 0)
      c.flops = 2.0 * numelOf(n.input(0)) * numelOf(n.input(1)) / static_cast<double>((*w)[0]);
  } else if (op == "MatMul" || op == "MatMulInteger" || op == "Gemm" || op == "QLinearMatMul" ||
             op == "WeightQuantMatMul") {  // (its int4 / int8 weights count by bits in bytesRead)
    auto a = extents(n.input(0));
    if (a && !a->empty()) {
      int64_t k = a->back();
      if (op == "Gemm" && n.attrInt("transA", 0) && a->size() == 2) k = (*a)[0];
      c.flops = 2.0 * outNumel * static_cast<double>(k);
      if (op == "Gemm" && n.input(2)) c.flops += outNumel;
    }
  } else if (op == "LSTM" || op == "GRU" || op == "RNN") {
    auto x = extents(n.input(0));
    auto w = extents(n.input(1));
    auto r = extents(n.input(2));
    if (x && w && r && x->size() == 3 && w->size() == 3 && r->size() == 3)
      c.flops = 2.0 * static_cast<double>((*x)[0] * (*x)[1]) *
                static_cast<double>((*w)[0] * (*w)[1]) * static_cast<double>((*w)[2] + (*r)[2]);
  } else if (op == "MaxPool" || op == "AveragePool" || op == "LpPool") {
    double k = 1;
    for (int64_t e : n.attrInts("kernel_shape")) k *= static_cast<double>(e);
    c.flops = outNumel * k;
  } else if (op == "GlobalAveragePool" || op == "GlobalMaxPool" || op.rfind("Reduce", 0) == 0 ||
             op == "ArgMax" || op == "ArgMin") {
    c.flops = numelOf(n.input(0));
  } else if (op == "Softmax" || op == "LogSoftmax" || op == "Hardmax") {
    c.flops = 5.0 * outNumel;
  } else if (op == "BatchNormalization" || op == "InstanceNormalization" || op == "LayerNormalization" ||
             op == "GroupNormalization" || op == "LRN" || op == "MeanVarianceNormalization") {
    c.flops = 8.0 * outNumel;
  } else if (heavyElementwise().count(op)) {
    c.flops = 4.0 * outNumel;
  } else if (defaultComputeUnit(n.domain(), op) == ComputeUnit::Host) {
    c.flops = 0;
    c.bytesRead = 0;
    c.bytesWritten = 0;
  } else {
    c.flops = outNumel;  // one vector op per output element: Add, Mul, Relu, Cast, Where, ...
  }
  return c;
}

}  // namespace kiln
