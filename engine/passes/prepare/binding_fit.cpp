#include "passes/prepare/binding_fit.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "ir/model.h"
#include "ir/opdefs/shape_inference.h"
#include "kernels/kernel_shape_probe.h"

namespace kiln {
namespace {

bool startsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// How many nodes inference fails on with `binding` applied; the graph's types are put back afterwards.
size_t inferenceFailures(Graph& g, const std::map<std::string, int64_t>& opsets, const ShapeBinding& binding) {
  std::vector<std::pair<Value*, ValueType>> saved;
  g.forEachGraph([&](Graph& sg) {
    for (Value* v : sg.values()) saved.emplace_back(v, v->type());
  });
  applyShapeBinding(g, binding);
  InferenceOptions options;
  options.maxWarnings = 0;
  const auto it = opsets.find("");
  const int64_t opset = it == opsets.end() ? 0 : it->second;
  options.probe = [opset](Node& n) { return probeOutputTypes(n, opset); };
  const size_t failed = inferShapes(g, opsets, options).nodesFailed;
  for (auto& [v, t] : saved)
    if (!(v->type() == t)) v->setType(std::move(t));
  return failed;
}

// The request with the sequence roles in play lowered to `v` (never raised).
BindingRequest lowered(BindingRequest request, bool sequence, bool past, int64_t v) {
  if (sequence) request.policy.sequence = std::min(request.policy.sequence, v);
  if (past) request.policy.pastSequence = std::min(request.policy.pastSequence, v);
  return request;
}

}  // namespace

ShapeBinding resolveFittedBinding(const Model& model, const BindingRequest& request) {
  // Probes restore every type they change (see the header): the model is only borrowed.
  Graph& g = const_cast<Graph&>(*model.graph);
  const std::map<std::string, int64_t>& opsets = model.opsets;
  ShapeBinding binding = resolveShapeBinding(g, request);
  // The roles the policy chose an extent for, from a symbol of their own (a total only follows them).
  bool sequence = false, past = false;
  for (const BoundSymbol& b : binding.bound) {
    sequence = sequence || startsWith(b.source, "dim_policy: sequence");
    past = past || startsWith(b.source, "dim_policy: past_sequence");
  }
  if (!sequence && !past) return binding;
  const int64_t top = std::max(sequence ? request.policy.sequence : 1, past ? request.policy.pastSequence : 1);
  const size_t atPolicy = inferenceFailures(g, opsets, binding);
  if (atPolicy == 0 || top <= 1) return binding;
  const size_t atOne = inferenceFailures(g, opsets, resolveShapeBinding(g, lowered(request, sequence, past, 1)));
  if (atPolicy <= atOne) return binding;  // the failures do not come from the sequence extents
  // Bisection: `lo` fails no more than at 1, `hi` does.
  int64_t lo = 1, hi = top;
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    const size_t failed = inferenceFailures(g, opsets, resolveShapeBinding(g, lowered(request, sequence, past, mid)));
    (failed <= atOne ? lo : hi) = mid;
  }
  ShapeBinding fitted = resolveShapeBinding(g, lowered(request, sequence, past, lo));
  // Say why each lowered extent is not the policy's.
  for (BoundSymbol& b : fitted.bound) {
    const BoundSymbol* was = binding.find(b.symbol);
    if (!was || was->value == b.value || !startsWith(b.source, "dim_policy")) continue;
    b.source += ", fitted to the model: " + std::to_string(was->value) + " fails shape inference on " +
                std::to_string(atPolicy - atOne) + " node" + (atPolicy - atOne == 1 ? "" : "s");
  }
  return fitted;
}

}  // namespace kiln
