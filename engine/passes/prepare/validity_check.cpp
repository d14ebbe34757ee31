// ValidityCheck: decides which engine runs each op — AI Core (cube or vector unit), AI CPU, or the host — and
// records it on the node ("engine" annotation, with "unit"). Ops no engine supports are tagged "unsupported"
// and reported; they do not fail the run, so the rest of the model can still be seen and compiled.
#include "ir/model.h"
#include "ir/opdefs/op_registry.h"
#include "passes/prepare/prepare_passes.h"
#include "schedule/engine_placement.h"

namespace kiln {
namespace {

class ValidityCheck final : public Pass {
 public:
  std::string name() const override { return "ValidityCheck"; }

  PassResult run(PassContext& ctx) override {
    PassResult r;
    std::map<std::string, int64_t> unsupported;
    const Model& m = ctx.model;
    ctx.model.graph->forEachGraph([&](Graph& g) {
      for (Node* n : g.nodes()) {
        const Placement p = placementOf(*n, m);
        if (p.engine == "unsupported") ++unsupported[n->qualifiedType()];
        r.changed = annotatePlacement(*n, p) || r.changed;
        ++r.counters[p.engine];
      }
    });
    for (const auto& [op, count] : unsupported)
      ctx.warnings.push_back("ValidityCheck: no engine supports " + op + " (" + std::to_string(count) + " nodes)");
    return r;
  }
};

}  // namespace

std::unique_ptr<Pass> makeValidityCheckPass() { return std::make_unique<ValidityCheck>(); }

}  // namespace kiln
