#pragma once
// Runs a whole (subgraph-free) graph on the reference kernels, for numeric checks of rewrites: the same inputs
// through the graph before and after a pass must give the same outputs.
#include <QtGlobal>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "kernels/kernel.h"
#include "ir/graph.h"

namespace kiln::testing {

// The graph's outputs for `inputs` (by input name); empty when some node has no kernel.
inline std::vector<Tensor> evaluateGraph(const Graph& g, const std::map<std::string, Tensor>& inputs) {
  std::map<const Value*, Tensor> values;
  for (const Value* v : g.values())
    if (v->constant()) values.emplace(v, *v->constant());
  for (const Value* v : g.inputs()) values.insert_or_assign(v, inputs.at(v->name()));
  const auto order = g.topologicalOrder();
  if (!order) return {};
  for (const Node* n : *order) {
    std::vector<const Tensor*> in;
    for (const Value* v : n->inputs()) in.push_back(v ? &values.at(v) : nullptr);
    std::vector<Tensor> out = evaluateNode(*n, in);
    if (out.empty()) {
      qInfo("no kernel for %s", n->qualifiedType().c_str());
      return {};
    }
    for (size_t i = 0; i < out.size() && i < n->numOutputs(); ++i)
      if (n->output(i)) values.insert_or_assign(n->output(i), std::move(out[i]));
  }
  std::vector<Tensor> result;
  for (const Value* v : g.outputs()) result.push_back(values.at(v));
  return result;
}

// Uniform fp32 values in [-2, 2), reproducible per seed.
inline Tensor randomFloats(std::vector<int64_t> dims, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (float& e : v) e = dist(rng);
  return Tensor::fromVector(DType::Float, std::move(dims), v);
}

// Largest |a - b| over two equally shaped tensors (infinity when the shapes differ).
inline double maxDifference(const Tensor& a, const Tensor& b) {
  if (a.dims() != b.dims()) return HUGE_VAL;
  const std::vector<double> x = a.toDouble(), y = b.toDouble();
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) worst = std::max(worst, std::fabs(x[i] - y[i]));
  return worst;
}

}  // namespace kiln::testing
