// MemoryAssignment: GE's "assign memory" build step. Lifetimes of every tensor of the scheduled main graph
// (memory/lifetimes.h), then one offset per arena block from the planner the options name (`memory.planner`;
// `disable_reuse_memory` forces "none"), offsets aligned to 512 bytes.
// no_reuse_bytes is the arena of planner "none" over the same aligned blocks, so the two compare like for like.
// Across streams (`memory.reuse_across_streams`): "events" plans every block to its last reader — stretched as
// below wherever that keeps the peak at the lower bound (memory/stretch_within_bound.h) — and leaves it to
// MemoryReuseEvents to order the reuses that cross streams; "ordered" plans the blocks stretched until every
// stream knows their readers (memory/reuse_handoffs.h: no new event, no stream ever waits for memory); "auto" plans
// both and keeps the events plan only when its arena is at least 5% smaller. The lower bound is always over the
// blocks to their last reader: what any plan of these lifetimes needs, so arena/lower_bound shows what ordering
// costs.
// Annotations, one entry per input/output slot (as GE's input_i / output_i): "mem.in", "mem.out" = the arena
// offset, or where the tensor lives instead ("input", "output", "weight"; "unsized" for symbolic shapes, "-" for
// an omitted optional slot). Counters: memory_size (the arena), lower_bound, no_reuse_bytes, weight_bytes,
// io_bytes, blocks, unsized, planner_<name>, and reuse_by_events or reuse_where_ordered (which plan was kept).
#include <optional>
#include <string>

#include "ir/graph.h"
#include "ir/model.h"
#include "memory/lifetimes.h"
#include "memory/memory_plan.h"
#include "memory/reuse_handoffs.h"
#include "memory/stretch_within_bound.h"
#include "passes/compile/compile_passes.h"
#include "options/options.h"
#include "schedule/happens_before.h"

namespace kiln {
namespace {

constexpr int64_t kEventsWorthIt = 20;  // 5%

// Whether reusing by events wins (saves at least 1/kEventsWorthIt of the ordered arena) against an ordered plan of
// any arena from `orderedBound` up: the saving only grows with the ordered arena.
bool eventsWinAtAnySize(int64_t orderedBound, int64_t eventsArena) {
  return orderedBound - eventsArena >= orderedBound / kEventsWorthIt;
}

bool sameIntervals(const std::vector<memory::Buffer>& a, const std::vector<memory::Buffer>& b) {
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].upper != b[i].upper) return false;
  return true;
}

class MemoryAssignment final : public Pass {
 public:
  std::string name() const override { return "MemoryAssignment"; }

  PassResult run(PassContext& ctx) override {
    Graph& g = *ctx.model.graph;
    const memory::Lifetimes life = memory::computeLifetimes(g);
    std::string planner = ctx.options.getString("memory.planner");
    if (planner == "auto") planner.clear();
    if (ctx.options.getBool("disable_reuse_memory")) planner = "none";
    // Offsets are 512-aligned, so a block really occupies its size rounded up to 512: planning with those sizes
    // lets a plan reach its lower bound (and the default planner stop there instead of searching on).
    const std::vector<memory::Buffer> blocks = memory::alignedBlocks(life);
    const std::string across = ctx.options.getString("memory.reuse_across_streams");
    HappensBefore hb(memory::stepNodes(g, life));
    hb.runToEnd();
    const std::vector<memory::Buffer> stretched = memory::streamOrderedBlocks(life, hb);
    // The default planner (best_of, then the exact search when the plan misses its bound) plans the candidates
    // below with best_of first and searches only the one chosen: the search spends up to its budget on each plan it
    // is given, and on a 1k-node llama it spent 4 s on candidates a cheaper one had already beaten at the bound.
    const bool searchChosen = planner.empty();
    const std::string first = searchChosen ? std::string("best_of") : planner;
    std::optional<memory::Plan> byEvents, ordered;
    std::vector<memory::Buffer> byEventsBlocks, orderedBlocks;  // the intervals each plan was made for
    if (across != "ordered") {
      // Stretched wherever that is free, so that fewer reuses wait for an event (memory/stretch_within_bound.h).
      std::vector<memory::Buffer> partly = memory::stretchedWithinBound(blocks, stretched);
      if (sameIntervals(partly, blocks)) {
        byEvents = memory::planMemory(partly, first, memory::kArenaAlignment);
      } else {
        // The bound is the same, but the longer lifetimes can make it harder to reach (bound llama: +3-6%): when
        // the plan misses it, the blocks to their last reader are planned too and the smaller arena wins (the
        // stretched plan on a tie). best_of first asks only whether the stretched blocks reach the bound, giving
        // up on each ordering as it passes it: on a 1,600-layer llama the full search of all eight orderings took
        // 2.5 s, then lost to the blocks' plan that reached the bound in 0.1 s.
        std::optional<memory::Plan> missed;  // the stretched blocks' full plan, when it missed the bound
        if (first == "best_of") {
          byEvents = memory::planBestOfAtBound(partly, memory::kArenaAlignment);
        } else {
          memory::Plan p = memory::planMemory(partly, first, memory::kArenaAlignment);
          (p.arenaBytes <= p.lowerBound ? byEvents : missed) = std::move(p);
        }
        if (!byEvents) {
          memory::Plan plain = memory::planMemory(blocks, first, memory::kArenaAlignment);
          if (!missed && plain.arenaBytes > plain.lowerBound)
            missed = memory::planMemory(partly, first, memory::kArenaAlignment);
          if (missed && missed->arenaBytes <= plain.arenaBytes) {
            byEvents = std::move(missed);
          } else {
            byEvents = std::move(plain);
            partly = blocks;
          }
        }
      }
      byEventsBlocks = std::move(partly);
    }
    if (across != "events") {
      // Nothing stretched (one stream, or every reader already ordered): one plan serves both.
      if (byEvents && sameIntervals(stretched, blocks)) {
        ordered.swap(byEvents);
        orderedBlocks = std::move(byEventsBlocks);
      } else if (!byEvents || !eventsWinAtAnySize(memory::lowerBound(stretched), byEvents->arenaBytes)) {
        ordered = memory::planMemory(stretched, first, memory::kArenaAlignment);
        orderedBlocks = stretched;
      }
      // (Otherwise the ordered plan is not made: even at its lower bound it would lose to the events' plan by the
      // margin below, so planning it changed nothing. On a 32-layer llama that was 36 of the pass's 79 ms.)
    }
    // Events cost streams their overlap (attention_past_state: a 3% smaller arena for +6% simulated latency;
    // mobilenetv2 with weights as inputs: 16 times smaller for +10%), so auto takes them only for a real saving: at
    // least 1/kEventsWorthIt of the ordered arena.
    const bool keepOrdered = ordered && (!byEvents || !eventsWinAtAnySize(ordered->arenaBytes, byEvents->arenaBytes));
    memory::Plan& plan = keepOrdered ? *ordered : *byEvents;
    if (searchChosen && plan.arenaBytes > plan.lowerBound) {
      // The default planner in full (the exact search included) on the chosen candidate only.
      memory::Plan searched = memory::planMemory(keepOrdered ? orderedBlocks : byEventsBlocks, planner,
                                                 memory::kArenaAlignment);
      if (searched.arenaBytes <= plan.arenaBytes) plan = std::move(searched);
    }

    auto where = [&](const Value* v) -> std::string {
      if (!v) return "-";
      const memory::TensorLifetime* t = life.find(v);
      if (!t) return "-";
      if (t->kind == memory::TensorKind::Arena) return std::to_string(plan.offset[size_t(t->block)]);
      return std::string(memory::tensorKindName(t->kind));
    };
    auto list = [&](const std::vector<Value*>& values) {
      std::string s;
      for (const Value* v : values) s += (s.empty() ? "" : ",") + where(v);
      return s;
    };
    PassResult r;
    for (Node* n : g.nodes()) {
      const std::string in = list(n->inputs()), out = list(n->outputs());
      if (n->annotation("mem.in") != in || n->annotation("mem.out") != out) {
        n->setAnnotation("mem.in", in);
        n->setAnnotation("mem.out", out);
        r.changed = true;
      }
    }
    r.counters["memory_size"] = plan.arenaBytes;
    r.counters["lower_bound"] = memory::lowerBound(blocks);
    // Without reuse every block sits at its own aligned offset: the same sizes the planner saw, end to end.
    int64_t noReuse = 0;
    for (const memory::Buffer& b : blocks) noReuse += b.size;
    r.counters["no_reuse_bytes"] = noReuse;
    r.counters["weight_bytes"] = life.weightBytes;
    r.counters["io_bytes"] = life.ioBytes;
    r.counters["blocks"] = int64_t(life.blocks.size());
    if (life.unsized > 0) {
      r.counters["unsized"] = life.unsized;
      // Out of the plan, so out of the arena the model reports: say why and what would size them.
      const std::string hint = ctx.model.binding.hint();
      ctx.warnings.push_back("MemoryAssignment: " + std::to_string(life.unsized) +
                             " tensors have no static size and are not planned" +
                             (!ctx.model.binding.kept.empty() ? " (dim_values=keep left symbols open)"
                              : hint.empty()                  ? " (data-dependent shapes)"
                                                              : "; " + hint));
    }
    r.counters["planner_" + plan.planner] = 1;
    r.counters[keepOrdered ? "reuse_where_ordered" : "reuse_by_events"] = 1;
    return r;
  }
};

}  // namespace

std::unique_ptr<Pass> makeMemoryAssignmentPass() { return std::make_unique<MemoryAssignment>(); }

}  // namespace kiln
