// EnginePlacement: places every node again after the graph rewrites of Stage 2, so fused nodes, casts and layout
// conversions have an engine too, and a node whose data the AI Core cannot compute (64-bit integers...) says why
// it went to AI CPU ("engine.reason"). Counters: nodes per engine.
#include "ir/graph.h"
#include "ir/model.h"
#include "passes/optimize/schedule_passes.h"
#include "schedule/engine_placement.h"

namespace kiln {
namespace {

class EnginePlacement final : public Pass {
 public:
  std::string name() const override { return "EnginePlacement"; }

  PassResult run(PassContext& ctx) override {
    PassResult r;
    const Model& m = ctx.model;
    ctx.model.graph->forEachGraph([&](Graph& g) {
      for (Node* n : g.nodes()) {
        const Placement p = placementOf(*n, m);
        r.changed = annotatePlacement(*n, p) || r.changed;
        r.add(p.engine == "aicore" ? "aicore." + p.unit : p.engine);
      }
    });
    return r;
  }
};

}  // namespace

std::unique_ptr<Pass> makeEnginePlacementPass() { return std::make_unique<EnginePlacement>(); }

}  // namespace kiln
