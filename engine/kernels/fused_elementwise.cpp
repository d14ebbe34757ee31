// kiln:FusedElementwise (ElementwiseChainFusion): runs the `body` graph, the original element-wise ops, node by node
// through the registry, so the fused kernel computes exactly what the unfused chain did (same kernels, same
// rounding of every intermediate into its type). Declines when any body op has no kernel or declines itself.
#include <map>
#include <optional>

#include "kernels/kernel_util.h"
#include "ir/graph.h"

namespace kiln::kernels {
namespace {

std::vector<Tensor> fusedElementwise(const KernelContext& ctx) {
  const Node& node = ctx.node();
  const Attribute* a = node.attr("body");
  const Attribute::GraphPtr* body = a ? a->get<Attribute::GraphPtr>() : nullptr;
  if (!body || !*body) ctx.fail("graph attribute 'body' is missing");
  const Graph& g = **body;
  if (g.inputs().size() != ctx.numInputs() || g.outputs().size() != node.numOutputs())
    ctx.fail("body has " + std::to_string(g.inputs().size()) + " inputs and " + std::to_string(g.outputs().size()) +
             " outputs, the node " + std::to_string(ctx.numInputs()) + " and " + std::to_string(node.numOutputs()));
  const std::optional<std::vector<Node*>> order = g.topologicalOrder();
  if (!order) ctx.fail("body has a cycle");

  std::map<const Value*, Tensor> env;
  for (size_t i = 0; i < g.inputs().size(); ++i)
    if (const Tensor* t = ctx.input(i)) env[g.inputs()[i]] = *t;
  const auto valueOf = [&](const Value* v) -> const Tensor* {
    if (!v) return nullptr;
    if (auto it = env.find(v); it != env.end()) return &it->second;
    return v->constant();
  };
  for (const Node* n : *order) {
    std::vector<const Tensor*> in;
    for (const Value* v : n->inputs()) {
      const Tensor* t = valueOf(v);
      if (v && !t) ctx.fail("body value '" + v->name() + "' has no data");
      in.push_back(t);
    }
    std::vector<Tensor> out = evaluateNode(*n, in, ctx.limits());
    if (out.empty()) return {};
    for (size_t i = 0; i < n->numOutputs(); ++i)
      if (n->output(i)) env[n->output(i)] = std::move(out[i]);
  }
  std::vector<Tensor> result;
  for (const Value* v : g.outputs()) {
    const Tensor* t = valueOf(v);
    if (!t) ctx.fail("body output '" + (v ? v->name() : std::string()) + "' has no data");
    result.push_back(*t);
  }
  return result;
}

}  // namespace

void registerFusedElementwiseKernels(KernelRegistry& r) { r.add("FusedElementwise", fusedElementwise, "kiln"); }

}  // namespace kiln::kernels
