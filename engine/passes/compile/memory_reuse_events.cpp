// MemoryReuseEvents: GE inserts its stream events after memory assignment, so that they order the plan's reuses
// too. Lifetimes end at a tensor's last reader in the execution order; where the plan then gives those bytes to a
// tensor written on another stream that does not already wait for that reader (directly or through a chain of
// events), the reader's stream records an event and the writer's stream waits for it (memory/reuse_handoffs.h).
// Only the reuses the plan really makes cost an event, so streams stay concurrent wherever memory allows.
// Counters: reuse_events (added), events (all, after it).
#include <algorithm>
#include <vector>

#include "ir/graph.h"
#include "ir/model.h"
#include "memory/lifetimes.h"
#include "memory/planned_offsets.h"
#include "memory/reuse_handoffs.h"
#include "passes/compile/compile_passes.h"
#include "schedule/happens_before.h"
#include "schedule/sync_events.h"

namespace kiln {
namespace {

class MemoryReuseEvents final : public Pass {
 public:
  std::string name() const override { return "MemoryReuseEvents"; }

  PassResult run(PassContext& ctx) override {
    Graph& g = *ctx.model.graph;
    const std::vector<Node*> all(g.nodes().begin(), g.nodes().end());
    std::vector<SyncEvent> events = eventsFromAnnotations(all);
    int nextId = 0;
    for (const SyncEvent& e : events) nextId = std::max(nextId, e.id + 1);

    const memory::Lifetimes life = memory::computeLifetimes(g);
    const std::vector<Node*> steps = memory::stepNodes(g, life);
    HappensBefore hb(steps);
    int64_t added = 0;
    memory::forEachUnorderedReuse(life, memory::plannedBlockOffsets(life), hb, [&](const memory::UnorderedReuse& r) {
      events.push_back({nextId++, steps[size_t(r.reader)], steps[size_t(r.step)]});
      hb.wait(r.reader);  // later reuses at this step, and every later step of its stream, now know of it
      ++added;
    });
    PassResult result;
    if (added > 0) result.changed = writeEventAnnotations(all, events) > 0;
    result.counters["reuse_events"] = added;
    result.counters["events"] = int64_t(events.size());
    return result;
  }
};

}  // namespace

std::unique_ptr<Pass> makeMemoryReuseEventsPass() { return std::make_unique<MemoryReuseEvents>(); }

}  // namespace kiln
