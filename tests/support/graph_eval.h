#pragma once
// Runs a graph on concrete inputs with the reference kernels, node by node in list order, so a test can compare a
// graph before and after a rewrite. A kiln:FusedElementwise runs its `body` the same way (that is what the body is
// for). Fails the calling test (returns an empty map) when a node has no kernel.
#include <QtTest>
#include <unordered_map>

#include "emulator/kernels/kernel.h"
#include "ir/graph.h"
#include "passes/constant_value.h"

namespace kiln::testing {

using Tensors = std::unordered_map<const Value*, Tensor>;

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
