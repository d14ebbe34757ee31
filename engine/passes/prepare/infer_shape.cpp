// InferShape: type and shape inference over the whole model (libonnx's functions for standard ops, our own for
// Kiln's). Run again after passes that create values, as GE interleaves InferShape with folding.
#include "ir/model.h"
#include "ir/opdefs/shape_inference.h"
#include "passes/prepare/prepare_passes.h"

namespace kiln {
namespace {

class InferShape final : public Pass {
 public:
  std::string name() const override { return "InferShape"; }

  PassResult run(PassContext& ctx) override {
    PassResult r;
    const uint64_t before = ctx.model.ids->revision;
    InferenceReport report = inferShapes(ctx.model);
    r.changed = ctx.model.ids->revision != before;  // a value's type actually changed
    r.counters["inferred"] = static_cast<int64_t>(report.nodesInferred);
    if (report.nodesFailed) r.counters["failed"] = static_cast<int64_t>(report.nodesFailed);
    int64_t unknown = 0;
    for (const auto& [op, n] : report.unknownOps) unknown += n;
    if (unknown) r.counters["unknown_ops"] = unknown;
    for (auto& w : report.warnings) ctx.warnings.push_back("InferShape: " + w);
    return r;
  }
};

}  // namespace

std::unique_ptr<Pass> makeInferShapePass() { return std::make_unique<InferShape>(); }

}  // namespace kiln
