// InferShape: type and shape inference over the whole model (libonnx's functions for standard ops, our own for
// Kiln's, the emulator's kernels for the contrib and experimental ops nothing else infers). Run again after passes that create values, as GE interleaves InferShape with folding.
#include <algorithm>

#include "kernels/kernel_shape_probe.h"
#include "ir/graph.h"
#include "ir/model.h"
#include "ir/opdefs/shape_inference.h"
#include "passes/prepare/prepare_passes.h"

namespace kiln {
namespace {

bool shaped(const Value* v) {
  return !v || (v->type().isTensor() ? v->type().dtype != DType::Undefined && v->type().shape.rankKnown()
                                     : v->type().known());
}

// The first node (in graph order) whose inputs all have shapes but whose outputs do not: where the shapes were lost.
// Everything after it that also lacks them is counted: their costs will be unknown, and the compile says so once.
std::string shapesLostWarning(const Graph& g) {
  const Node* first = nullptr;
  size_t after = 0;
  for (const Node* n : g.nodes()) {
    const bool outputsKnown = std::all_of(n->outputs().begin(), n->outputs().end(), shaped);
    if (outputsKnown) continue;
    if (first) {
      ++after;
      continue;
    }
    if (std::all_of(n->inputs().begin(), n->inputs().end(), shaped)) first = n;
  }
  if (!first) return {};
  const std::string who = first->name().empty() ? "an unnamed " + first->qualifiedType() + " node"
                                                : "node '" + first->name() + "' (" + first->qualifiedType() + ")";
  return "InferShape: shapes are lost at " + who + ": its inputs have shapes, its outputs none" +
         (after ? "; " + std::to_string(after) + (after == 1 ? " later node lacks" : " later nodes lack") + " them too"
                : "") +
         ". Their costs are reported as unknown, not estimated.";
}

class InferShape final : public Pass {
 public:
  std::string name() const override { return "InferShape"; }

  PassResult run(PassContext& ctx) override {
    PassResult r;
    const uint64_t before = ctx.model.ids->revision;
    InferenceOptions options;
    const int64_t opset = ctx.model.opsetFor("");
    options.probe = [opset](Node& n) { return probeOutputTypes(n, opset); };  // contrib and experimental ops
    InferenceReport report = inferShapes(ctx.model, options);
    r.changed = ctx.model.ids->revision != before;  // a value's type actually changed
    r.counters["inferred"] = static_cast<int64_t>(report.nodesInferred);
    if (report.nodesFailed) r.counters["failed"] = static_cast<int64_t>(report.nodesFailed);
    int64_t unknown = 0;
    for (const auto& [op, n] : report.unknownOps) unknown += n;
    if (unknown) r.counters["unknown_ops"] = unknown;
    for (auto& w : report.warnings) ctx.warnings.push_back("InferShape: " + w);
    if (std::string lost = shapesLostWarning(*ctx.model.graph); !lost.empty()) {
      // Once per compile: InferShape runs again after folding and would say it again.
      const bool said = std::any_of(ctx.warnings.begin(), ctx.warnings.end(), [](const std::string& w) {
        return w.rfind("InferShape: shapes are lost at ", 0) == 0;
      });
      if (!said) ctx.warnings.push_back(std::move(lost));
    }
    // Inference that fails at bound extents usually means the model cannot take them (a position table shorter
    // than the bound sequence, a kernel wider than the bound image): say which extents and how to change them, once.
    if (report.nodesFailed && !ctx.model.binding.bound.empty()) {
      const std::string hint = "InferShape: " + std::to_string(report.nodesFailed) +
                               " nodes failed at the bound shapes; " + ctx.model.binding.hint();
      const bool said = std::any_of(ctx.warnings.begin(), ctx.warnings.end(), [](const std::string& w) {
        return w.find("failed at the bound shapes") != std::string::npos;
      });
      if (!said) ctx.warnings.push_back(hint);
    }
    return r;
  }
};

}  // namespace

std::unique_ptr<Pass> makeInferShapePass() { return std::make_unique<InferShape>(); }

}  // namespace kiln
