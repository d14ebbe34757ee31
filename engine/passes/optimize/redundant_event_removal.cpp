// RedundantEventRemoval: an event is redundant when the waiting stream already knows the producer has finished —
// it waited before for a later task of the producer's stream, directly or through a third stream (vector clocks,
// schedule/sync_events.h). Each removed event saves a record and a wait on the device. Counters: removed, events.
#include <vector>

#include "ir/graph.h"
#include "ir/model.h"
#include "passes/optimize/schedule_passes.h"
#include "schedule/sync_events.h"

namespace kiln {
namespace {

class RedundantEventRemoval final : public Pass {
 public:
  std::string name() const override { return "RedundantEventRemoval"; }

  PassResult run(PassContext& ctx) override {
    Graph& g = *ctx.model.graph;
    const std::vector<Node*> order(g.nodes().begin(), g.nodes().end());
    const std::vector<SyncEvent> events = eventsFromAnnotations(order);
    const std::vector<SyncEvent> kept = withoutRedundantEvents(order, streamsFromAnnotations(order), events);
    PassResult r;
    r.changed = writeEventAnnotations(order, kept) > 0;
    r.counters["removed"] = static_cast<int64_t>(events.size() - kept.size());
    r.counters["events"] = static_cast<int64_t>(kept.size());
    return r;
  }
};

}  // namespace

std::unique_ptr<Pass> makeRedundantEventRemovalPass() { return std::make_unique<RedundantEventRemoval>(); }

}  // namespace kiln
