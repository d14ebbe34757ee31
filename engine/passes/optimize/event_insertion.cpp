// EventInsertion: wherever a producer and its consumer sit on different streams, an event is recorded after the
// producer and waited for before the consumer ("event.record" / "event.wait" annotations). One event per
// producer-consumer pair; RedundantEventRemoval then drops those other events imply. Counter: events.
#include <vector>

#include "ir/graph.h"
#include "ir/model.h"
#include "passes/optimize/schedule_passes.h"
#include "schedule/sync_events.h"

namespace kiln {
namespace {

class EventInsertion final : public Pass {
 public:
  std::string name() const override { return "EventInsertion"; }

  PassResult run(PassContext& ctx) override {
    Graph& g = *ctx.model.graph;
    const std::vector<Node*> order(g.nodes().begin(), g.nodes().end());
    const std::vector<SyncEvent> events = crossStreamEvents(order, streamsFromAnnotations(order));
    PassResult r;
    r.changed = writeEventAnnotations(order, events) > 0;
    r.counters["events"] = static_cast<int64_t>(events.size());
    return r;
  }
};

}  // namespace

std::unique_ptr<Pass> makeEventInsertionPass() { return std::make_unique<EventInsertion>(); }

}  // namespace kiln
