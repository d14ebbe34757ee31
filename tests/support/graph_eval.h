#pragma once
// Runs a graph on concrete inputs with the reference kernels, node by node in list order, so a test can compare a
// graph before and after a rewrite. A kiln:FusedElementwise runs its `body` the same way (that is what the body is
// for). The kernel library has no MatMul, Softmax or Clip yet: small float versions here stand in for them (batched
// MatMul with equal batch dims, Softmax over the last axis, Clip with optional bounds). Returns nothing (and warns)
// when a node has no kernel.
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "kernels/kernel.h"
#include "ir/graph.h"
#include "passes/constant_value.h"

namespace kiln::testing {

using Tensors = std::unordered_map<const Value*, Tensor>;

// Small typed values for hand-built graphs: an fp32 tensor type, fp32 data, deterministic data in [-1, 1).
inline ValueType f32(const std::vector<int64_t>& dims) {
  return ValueType::tensor(DType::Float, Shape::ofStatic(dims));
}
inline Tensor floats(std::vector<int64_t> dims, const std::vector<double>& v) {
  return convertTensor(Tensor::fromVector(DType::Double, std::move(dims), v), DType::Float);
}
inline Tensor pattern(std::vector<int64_t> dims, int seed) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(std::fmod((i + 1) * 0.37 * (seed + 1), 2.0) - 1.0);
  return floats(std::move(dims), v);
}

// The stand-ins; empty when the node is none of them or its inputs are outside what they handle.
inline std::vector<Tensor> evaluateMissingKernel(const Node& n, const std::vector<const Tensor*>& in) {
  const Tensor* x = in.empty() ? nullptr : in[0];
  if (!x || x->dims().empty()) return {};
  const std::vector<double> a = x->toDouble();
  const auto& d = x->dims();
  const int64_t last = d.back();
  if (n.opType() == "Softmax") {
    const int64_t axis = n.attrInt("axis", -1);
    if (axis != -1 && axis != int64_t(d.size()) - 1) return {};  // only the last axis (opset 13 meaning)
    std::vector<double> y(a.size());
    for (size_t row = 0; row < a.size(); row += size_t(last)) {
      double top = -INFINITY, sum = 0;
      for (int64_t j = 0; j < last; ++j) top = std::max(top, a[row + j]);
      for (int64_t j = 0; j < last; ++j) sum += (y[row + j] = std::exp(a[row + j] - top));
      for (int64_t j = 0; j < last; ++j) y[row + j] /= sum;
    }
    return {floats(d, y)};
  }
  if (n.opType() == "Clip") {
    const double lo = in.size() > 1 && in[1] ? in[1]->toDouble().at(0) : -INFINITY;
    const double hi = in.size() > 2 && in[2] ? in[2]->toDouble().at(0) : INFINITY;
    std::vector<double> y;
    for (double e : a) y.push_back(std::min(hi, std::max(lo, e)));
    return {floats(d, y)};
  }
  if (n.opType() == "MatMul" && in.size() == 2 && in[1] && in[1]->dims().size() == d.size() && d.size() >= 2) {
    const auto& bd = in[1]->dims();
    const int64_t rows = d[d.size() - 2], inner = last, cols = bd.back();
    if (bd[bd.size() - 2] != inner || !std::equal(d.begin(), d.end() - 2, bd.begin())) return {};
    const std::vector<double> b = in[1]->toDouble();
    const int64_t batches = int64_t(a.size()) / (rows * inner);
    std::vector<double> y(size_t(batches * rows * cols));
    for (int64_t t = 0; t < batches; ++t)
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j) {
          double acc = 0;
          for (int64_t k = 0; k < inner; ++k) acc += a[(t * rows + i) * inner + k] * b[(t * inner + k) * cols + j];
          y[(t * rows + i) * cols + j] = acc;
        }
    std::vector<int64_t> dims(d.begin(), d.end() - 1);
    dims.push_back(cols);
    return {floats(dims, y)};
  }
  return {};
}

inline std::vector<Tensor> evaluateGraph(const Graph& g, const std::vector<Tensor>& inputs) {
  Tensors env;
  for (size_t i = 0; i < g.inputs().size() && i < inputs.size(); ++i) env[g.inputs()[i]] = inputs[i];
  auto valueOf = [&](const Value* v) -> const Tensor* {
    if (!v) return nullptr;
    if (auto it = env.find(v); it != env.end()) return &it->second;
    return constantValueOf(v);
  };
  for (const Node* n : g.nodes()) {
    if (n->opType() == "Constant") continue;  // read through constantValueOf
    std::vector<Tensor> outs;
    if (const Attribute* body = n->attr("body"); body && n->opType() == "FusedElementwise") {
      std::vector<Tensor> in;
      for (const Value* v : n->inputs()) in.push_back(*valueOf(v));
      outs = evaluateGraph(**body->get<Attribute::GraphPtr>(), in);
    } else {
      std::vector<const Tensor*> in;
      for (const Value* v : n->inputs()) in.push_back(valueOf(v));
      outs = evaluateNode(*n, in);
      if (outs.empty()) outs = evaluateMissingKernel(*n, in);
    }
    if (outs.size() < n->numOutputs()) {
      qWarning("no kernel for %s (%s)", n->name().c_str(), n->qualifiedType().c_str());
      return {};
    }
    for (size_t i = 0; i < n->numOutputs(); ++i)
      if (n->output(i)) env[n->output(i)] = outs[i];
  }
  std::vector<Tensor> result;
  for (const Value* v : g.outputs()) result.push_back(*valueOf(v));
  return result;
}

// Largest absolute difference between two tensors of the same element count (infinity when the counts differ).
inline double maxAbsDiff(const Tensor& a, const Tensor& b) {
  const auto x = a.toDouble(), y = b.toDouble();
  if (x.size() != y.size()) return INFINITY;
  double d = 0;
  for (size_t i = 0; i < x.size(); ++i) d = std::max(d, std::abs(x[i] - y[i]));
  return d;
}

}  // namespace kiln::testing
