// Planner "exact": a complete search over canonical placements in the manner of MiniMalloc (Moffitt, ASPLOS 2023),
// deciding "do the buffers fit in C bytes?" and minimising C around that (search: exact_search.cpp; sections,
// conflicts, preorders: exact_sections.cpp). Every rule keeps reachable one witness whenever a solution exists: the
// solution minimising sum(offset x size^2), in which no buffer can move down (and, among equal twins, ranks rise).
// - Canonical: in the witness each buffer sits at the aligned highest end of the buffers below it that share its
//   time, so buffers are placed in order of non-decreasing offset, each at its candidate (the aligned highest end of
//   the placed buffers it shares time with). The last offset w is a watermark nothing later goes under; a buffer
//   whose candidate is under w can only rest on one placed later.
// - Symmetry: buffers placed one after another at the same offset never share time, so only increasing rank (a
//   static preorder) is explored.
// - Gap dominance: a placement at or above the lowest end some other unplaced buffer could reach (its candidate plus
//   its size) is skipped, and a state where a buffer's candidate plus size is at or under w is dead: that buffer
//   could sink into the gap in every completion.
// - Section bounds: sections are the maximal sets of buffers live together. In each, the unplaced buffers stack above
//   their lowest possible offsets: for every t, t plus the sizes of those that cannot go under t must fit (exact for
//   one section: scheduling with release dates); a buffer whose lowest offset already overflows kills the branch.
//   Its cheap form (above the watermark and the highest end placed there, all bytes left in the section must fit) is
//   kept up to date on every placement and tried on each child before the child costs a node: on tight instances
//   nearly every child dies there.
// - Twin stack order: buffers with the same section run ("twins") share time with exactly the same buffers, so one
//   stacked directly on the other can trade places; the witness's weighting makes the larger one go below, so a twin
//   directly on a smaller twin (or on an equal one of higher rank) is skipped.
// - Decomposition: when the unplaced buffers split into groups that no buffer's lifetime bridges, the groups never
//   share time and are solved one after another, each from watermark 0; one that fails fails the state.
//   Each group is ranked afresh by the preorder, its "total" key counting only the bytes left in the group (the
//   twin rule keeps the ranking over all buffers, since a twin placed before the split may sit under one in a group).
// - Memo: a state (buffers left with their candidates and the twin under each, watermark, rank bound, strategy) that
//   failed is not searched again; failures stay valid while the capacity only shrinks. Keys are 128-bit.
// - Order: lowest candidate first, ties by rank. Six strategies, three preorders (width/area/total, total/area/width,
//   total/width/area) each with and without the twin rule (which changes the search's order of discovery), are tried
//   in turn under a node limit that doubles every round: a fixed strategy's run time is heavy-tailed, and one that
//   stalls on an instance often solves it at once under another.
// The arena is minimised by deciding a sequence of capacities: first the lower bound (tight capacities prune
// hardest, and it is often the optimum) with three quarters of the budget, then bisection between what is proven and
// what is found. Tests check it against brute force on small instances and check that each rule fires.
#include <algorithm>
#include <chrono>

#include "memory/exact_search.h"
#include "memory/planners.h"

namespace kiln::memory::detail {

namespace {

using Clock = std::chrono::steady_clock;

// Beyond these the conflict lists or the recursion get too big to be worth it: the heuristic result stands.
constexpr size_t kMaxBuffers = 5000;
constexpr size_t kMaxConflictPairs = 5'000'000;

// "Fits in capacity?" with the strategies in rotation under a node limit that starts at twice the buffer count and
// doubles each round, until one answers or the deadline passes.
Outcome decide(ExactSearch& search, size_t buffers, size_t strategies, int64_t capacity, Clock::time_point deadline,
               std::vector<int64_t>& offsets) {
  for (uint64_t limit = 2 * uint64_t(std::max<size_t>(buffers, 16));; limit *= 2)
    for (size_t o = 0; o < strategies; ++o) {
      const Outcome r = search.solve(capacity, o, limit, deadline, offsets);
      if (r != Outcome::Unknown || Clock::now() >= deadline) return r;
    }
}

}  // namespace

ExactResult planExact(const std::vector<Buffer>& buffers, int64_t alignment, const Placement& incumbent,
                      Clock::time_point deadline) {
  ExactResult result;
  int64_t lo = lowerBound(buffers);  // proven: no arena below lo
  int64_t best = incumbent.arena;
  if (best <= lo) {
    result.optimal = true;
    return result;
  }
  result.tooLarge = true;
  if (buffers.size() > kMaxBuffers) return result;
  ExactInstance instance;
  if (!buildExactInstance(buffers, kMaxConflictPairs, instance)) return result;
  result.tooLarge = false;
  ExactSearch search(buffers, alignment, instance);
  // First ask for the lower bound itself, then bisect between what is proven and what is found; a probe that runs out
  // of its slice moves the next probe up without proving anything.
  int64_t unknownAbove = lo;  // probes at or below it timed out
  bool first = true;
  while (lo < best) {
    const auto now = Clock::now();
    if (now >= deadline) break;
    const int64_t target = first ? lo : std::max(lo, unknownAbove) + (best - 1 - std::max(lo, unknownAbove)) / 2;
    const auto slice = first ? now + (deadline - now) * 3 / 4 : now + (deadline - now) / 3;
    first = false;
    std::vector<int64_t> offsets;
    switch (decide(search, buffers.size(), search.strategies(), target, slice, offsets)) {
      case Outcome::Found:
        result.placement.offset = std::move(offsets);
        result.placement.arena = arenaOf(buffers, result.placement.offset);
        best = result.placement.arena;
        if (unknownAbove >= best) unknownAbove = lo;  // the slices that timed out above it no longer matter
        break;
      case Outcome::Infeasible:
        lo = target + 1;
        break;
      case Outcome::Unknown:
        if (target >= best - 1) return result;  // nothing left to probe
        unknownAbove = target + 1;
        break;
    }
  }
  result.optimal = lo >= best;
  return result;
}

}  // namespace kiln::memory::detail
