#pragma once
// Internal to engine/memory: the decision search behind planner "exact" ("do the buffers fit in C bytes?"), split
// into its static inputs (exact_sections.cpp: sections, conflicts, preorders) and the depth-first search with its
// pruning rules (exact_search.cpp). planner_exact.cpp turns the decision into minimisation.
#include <chrono>
#include <cstdint>
#include <utility>
#include <vector>

#include "memory/memory_plan.h"

namespace kiln::memory::detail {

// What the search needs to know about the instance, computed once.
struct ExactInstance {
  // Sections are the maximal sets of buffers live at one moment (the cliques of the interval graph, in time order).
  // Each buffer is live in a contiguous run [lo, hi) of them, two buffers share time exactly when their runs
  // intersect, and every set of buffers that share one moment lies inside one section, so per-section sums are the
  // strongest "stacked in one column" bounds, with fewer sections to scan than there are distinct time points.
  size_t sections = 0;
  std::vector<size_t> lo, hi;
  std::vector<std::vector<int32_t>> conflicts;  // per buffer: the buffers it shares time with
  // Per buffer: the others with the same section run, which therefore share time with exactly the same buffers.
  std::vector<std::vector<int32_t>> twins;
  // Preferences among all buffers (rank: lower first), one per preorder the search rotates through.
  std::vector<std::vector<int32_t>> ranks;
};

// How many preorders there are.
size_t preorders();
// Ranks the buffers of `group` 0..size-1 under preorder `preorder` (its "total" key counts only the group's bytes),
// writing rank[b] for each b in the group and nothing else.
void rankGroup(const std::vector<Buffer>& buffers, const ExactInstance& instance, size_t preorder,
               const std::vector<int32_t>& group, std::vector<int32_t>& rank);

// False when the conflict lists would exceed maxPairs (the instance is too big to search).
bool buildExactInstance(const std::vector<Buffer>& buffers, size_t maxPairs, ExactInstance& out);

enum class Outcome { Found, Infeasible, Unknown };  // Unknown: the node limit or the deadline came first

class ExactSearch {
 public:
  using Clock = std::chrono::steady_clock;
  ExactSearch(const std::vector<Buffer>& buffers, int64_t alignment, const ExactInstance& instance);

  // Searches for offsets with every buffer inside [0, capacity) under strategy `strategy` (< strategies(): a preorder
  // to break ties, with or without the twin stack-order rule), for at most `nodeLimit` nodes and until `deadline`.
  // Found fills `offsets`. Failed states are remembered across calls as long as the capacity does not grow (what fails
  // at C fails below C).
  Outcome solve(int64_t capacity, size_t strategy, uint64_t nodeLimit, Clock::time_point deadline,
                std::vector<int64_t>& offsets);
  uint64_t nodes() const { return totalNodes_; }
  // How often each rule cut the search, summed over calls (for tests: each rule must fire and keep optimality).
  struct Stats {
    uint64_t gap = 0, sections = 0, twins = 0, memo = 0, splits = 0;
  };
  const Stats& stats() const { return stats_; }
  size_t strategies() const { return 2 * inst_.ranks.size(); }

 private:
  // `context` names the ranking in force (the group it was computed for), part of every memo key below it.
  Outcome dfs(const std::vector<int32_t>& group, int64_t watermark, int32_t last, uint64_t context);
  Outcome solveApart(const std::vector<int32_t>& members);
  bool columnsOverflow(int64_t watermark, size_t from, size_t to) const;
  bool quickOverflow(const std::vector<int32_t>& members, const std::vector<int64_t>& lowest);
  bool fullOverflow(const std::vector<int32_t>& members, const std::vector<int64_t>& lowest);
  int32_t twinBelow(size_t b) const;
  void place(size_t b, int64_t at);
  void unwindTo(size_t mark);
  std::pair<uint64_t, uint64_t> stateKey(const std::vector<int32_t>& members, int64_t watermark, int32_t last,
                                         uint64_t context) const;

  // Failed states, open addressing over 128-bit keys (a false "failed" would cost optimality, so 64 bits of
  // collision odds per pair are not enough); stops inserting when full rather than growing without bound.
  class FailedStates {
   public:
    void clear();
    bool contains(std::pair<uint64_t, uint64_t> key) const;
    void insert(std::pair<uint64_t, uint64_t> key);

   private:
    std::vector<std::pair<uint64_t, uint64_t>> slots_;
    size_t used_ = 0;
  };

  const std::vector<Buffer>& buf_;
  const int64_t align_;
  const ExactInstance& inst_;
  const size_t n_;
  std::vector<int32_t> rank_;  // the preorder's ranks, re-ranked per group after each split
  size_t strategy_ = 0;
  bool twinOrder_ = true;  // whether the stack-order rule for twins applies (strategies alternate)
  int64_t capacity_ = 0, memoCapacity_ = -1;
  uint64_t nodes_ = 0, nodeLimit_ = 0, totalNodes_ = 0;
  Clock::time_point deadline_;
  bool stopped_ = false;

  std::vector<int64_t> cand_;    // per buffer: the aligned highest end of the placed buffers it shares time with
  std::vector<int64_t> offset_;  // per placed buffer
  std::vector<char> placed_;
  // Undo log: (buffer, previous cand); (-1 - b, columnTrail_ size before) marks b placed.
  std::vector<std::pair<int32_t, int64_t>> trail_;
  // Per section: the highest aligned end placed there, the bytes left to place there, and the undo log of the former.
  std::vector<int64_t> columnTop_, columnLeft_;
  std::vector<std::pair<size_t, int64_t>> columnTrail_;
  std::vector<int64_t> acc_, low_;                   // per section scratch for the section bound
  std::vector<uint32_t> accStamp_;
  uint32_t stamp_ = 0;
  std::vector<int64_t> top1_, top2_;  // per section scratch: the two lowest ends buffers left there can reach
  std::vector<int32_t> who1_;         // ... and which buffer reaches the lowest
  std::vector<uint32_t> topStamp_s_;
  uint32_t topStamp_ = 0;
  FailedStates failed_;
  Stats stats_;
};

}  // namespace kiln::memory::detail
