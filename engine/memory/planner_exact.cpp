// A complete search over canonical placements, in the manner of MiniMalloc. Facts it rests on:
// - Canonical: any plan can be pushed "down" (each buffer, lowest first, to the aligned end of the highest buffer
//   below it that shares time with it, or 0) without growing the arena. So each buffer's offset is the aligned
//   maximum end of the already-placed buffers it conflicts with ("its floor"), and buffers can be placed in order
//   of non-decreasing offset: the last placed offset w is a watermark under which nothing else will go.
// - Symmetry: buffers placed one after another at the same offset never share time (they would overlap), so their
//   order does not matter; only one order (a fixed preference) is explored.
// - Bounds: in every time section, the lowest offset any unplaced buffer there can still take (its floor, at least
//   w; a buffer whose floor is under w must rest on a conflicting buffer not yet placed) plus the section's
//   unplaced bytes must fit; a buffer whose lowest possible offset already overflows kills the branch.
// - Dominance: states with the same unplaced set, watermark and skyline (floors of the sections still in use) have
//   the same completions (the last buffer placed, which the symmetry rule looks at, is the most preferred one at
//   the watermark); one that failed is not searched again.
// - Order: lowest offset first, then buffers in the most loaded sections (they have the least freedom), then long
//   lifetimes. On the MiniMalloc traces this static order decides between solving in 0.1 s and not in 10 s.
// The arena is minimised by solving "fits in C?" for a sequence of capacities C between the lower bound and the
// best heuristic arena, each under a slice of the budget. Tests check it against brute force on small instances.
#include <algorithm>
#include <chrono>
#include <limits>
#include <numeric>
#include <unordered_set>

#include "memory/planners.h"

namespace kiln::memory::detail {

namespace {

using Clock = std::chrono::steady_clock;

// Beyond these the conflict lists or the recursion get too big to be worth it: the heuristic result stands.
constexpr size_t kMaxBuffers = 5000;
constexpr size_t kMaxConflictPairs = 5'000'000;
constexpr size_t kMaxFailedStates = 4'000'000;

uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

enum class Outcome { Found, Infeasible, Timeout };

class Search {
 public:
  Search(const std::vector<Buffer>& buffers, int64_t alignment) : buf_(buffers), align_(alignment), n_(buffers.size()) {
    std::vector<int64_t> times;
    for (const Buffer& b : buffers) times.push_back(b.lower), times.push_back(b.upper);
    std::sort(times.begin(), times.end());
    times.erase(std::unique(times.begin(), times.end()), times.end());
    sections_ = times.size();
    for (const Buffer& b : buffers) {
      lo_.push_back(static_cast<size_t>(std::lower_bound(times.begin(), times.end(), b.lower) - times.begin()));
      hi_.push_back(static_cast<size_t>(std::lower_bound(times.begin(), times.end(), b.upper) - times.begin()));
    }
    // Static preference among buffers at the same offset (see "Order" above).
    std::vector<int64_t> delta(sections_ + 1, 0), load(sections_, 0), total(n_, 0);
    for (size_t i = 0; i < n_; ++i) delta[lo_[i]] += buffers[i].size, delta[hi_[i]] -= buffers[i].size;
    for (size_t s = 0, live = 0; s < sections_; ++s) load[s] = int64_t(live += size_t(delta[s]));
    for (size_t i = 0; i < n_; ++i) total[i] = *std::max_element(load.begin() + long(lo_[i]), load.begin() + long(hi_[i]));
    std::vector<int32_t> byPreference(n_);
    std::iota(byPreference.begin(), byPreference.end(), 0);
    std::stable_sort(byPreference.begin(), byPreference.end(), [&](int32_t a, int32_t b) {
      const Buffer &x = buf_[static_cast<size_t>(a)], &y = buf_[static_cast<size_t>(b)];
      if (total[size_t(a)] != total[size_t(b)]) return total[size_t(a)] > total[size_t(b)];
      if (x.upper - x.lower != y.upper - y.lower) return x.upper - x.lower > y.upper - y.lower;
      return x.size * (x.upper - x.lower) > y.size * (y.upper - y.lower);
    });
    rank_.resize(n_);
    for (size_t r = 0; r < n_; ++r) rank_[static_cast<size_t>(byPreference[r])] = static_cast<int32_t>(r);
    for (size_t i = 0; i < n_; ++i) zobrist_.push_back(mix(i * 0x2545f4914f6cdd1dull + 1));
  }

  // False when the instance is too big for the search (conflict lists over the cap).
  bool buildConflicts() {
    std::vector<int32_t> byStart(n_);
    std::iota(byStart.begin(), byStart.end(), 0);
    std::sort(byStart.begin(), byStart.end(), [&](int32_t a, int32_t b) { return lo_[size_t(a)] < lo_[size_t(b)]; });
    conflicts_.assign(n_, {});
    size_t pairs = 0;
    for (size_t a = 0; a < n_; ++a)
      for (size_t c = a + 1; c < n_ && lo_[size_t(byStart[c])] < hi_[size_t(byStart[a])]; ++c) {
        const size_t x = size_t(byStart[a]), y = size_t(byStart[c]);
        conflicts_[x].push_back(int32_t(y));
        conflicts_[y].push_back(int32_t(x));
        if (++pairs > kMaxConflictPairs) return false;
      }
    return true;
  }

  Outcome solve(int64_t capacity, Clock::time_point deadline, std::vector<int64_t>& offsets) {
    capacity_ = capacity;
    deadline_ = deadline;
    timedOut_ = false;
    failed_.clear();
    cand_.assign(n_, 0);
    offset_.assign(n_, 0);
    placed_.assign(n_, 0);
    floor_.assign(sections_, 0);
    rem_.assign(sections_, 0);
    for (size_t i = 0; i < n_; ++i)
      for (size_t s = lo_[i]; s < hi_[i]; ++s) rem_[s] += buf_[i].size;
    placedHash_ = 0;
    openConflicts_.resize(n_);
    for (size_t i = 0; i < n_; ++i) openConflicts_[i] = conflicts_[i].size();
    children_.assign(n_ + 1, {});
    nodes_ = 0;
    const bool found = dfs(0, 0, -1);
    if (found) {
      offsets = offset_;
      return Outcome::Found;
    }
    return timedOut_ ? Outcome::Timeout : Outcome::Infeasible;
  }

 private:
  struct Undo {
    std::vector<std::pair<int32_t, int64_t>> cand;    // (buffer, previous floor)
    std::vector<std::pair<size_t, int64_t>> floors;  // (section, previous floor)
  };

  void place(size_t b, int64_t at, Undo& undo) {
    placed_[b] = 1;
    offset_[b] = at;
    placedHash_ ^= zobrist_[b];
    const int64_t end = at + buf_[b].size;
    for (size_t s = lo_[b]; s < hi_[b]; ++s) {
      rem_[s] -= buf_[b].size;
      if (floor_[s] < end) undo.floors.emplace_back(s, floor_[s]), floor_[s] = end;
    }
    const int64_t above = alignUp(end, align_);
    for (int32_t q : conflicts_[b]) --openConflicts_[size_t(q)];
    for (int32_t q : conflicts_[b])
      if (!placed_[size_t(q)] && cand_[size_t(q)] < above)
        undo.cand.emplace_back(q, cand_[size_t(q)]), cand_[size_t(q)] = above;
  }

  void unplace(size_t b, Undo& undo) {
    for (auto it = undo.cand.rbegin(); it != undo.cand.rend(); ++it) cand_[size_t(it->first)] = it->second;
    for (auto it = undo.floors.rbegin(); it != undo.floors.rend(); ++it) floor_[it->first] = it->second;
    for (size_t s = lo_[b]; s < hi_[b]; ++s) rem_[s] += buf_[b].size;
    for (int32_t q : conflicts_[b]) ++openConflicts_[size_t(q)];
    placedHash_ ^= zobrist_[b];
    placed_[b] = 0;
    undo.cand.clear();
    undo.floors.clear();
  }

  bool dfs(size_t depth, int64_t watermark, int32_t last) {
    if (depth == n_) return true;
    if ((++nodes_ & 1023) == 0 && Clock::now() > deadline_) timedOut_ = true;
    if (timedOut_) return false;
    // The lowest offset anything can still take in each section: max(floor, watermark) at best, but really the
    // lowest that an unplaced buffer covering it can take (each one's floor is the highest of its sections).
    std::vector<int64_t>& lowest = lowest_;
    lowest.assign(sections_, std::numeric_limits<int64_t>::max());
    std::vector<int32_t>& children = children_[depth];
    children.clear();
    for (size_t b = 0; b < n_; ++b) {
      if (placed_[b]) continue;
      int64_t at = std::max(cand_[b], watermark);
      if (cand_[b] < watermark) {
        // Below the watermark it can only rest on a buffer placed later, so no lower than the lowest end one of
        // them can reach; none left means a dead end.
        if (openConflicts_[b] == 0) return false;
        int64_t restsOn = std::numeric_limits<int64_t>::max();
        for (int32_t q : conflicts_[b])
          if (!placed_[size_t(q)]) restsOn = std::min(restsOn, std::max(cand_[size_t(q)], watermark) + buf_[size_t(q)].size);
        at = alignUp(restsOn, align_);
      }
      if (at + buf_[b].size > capacity_) return false;
      for (size_t s = lo_[b]; s < hi_[b]; ++s) lowest[s] = std::min(lowest[s], at);
      if (cand_[b] < watermark) continue;
      // Same offset as the previous placement and independent of it: only in preference order.
      if (cand_[b] == watermark && last >= 0 && rank_[b] < rank_[size_t(last)] && offset_[size_t(last)] == watermark &&
          (hi_[b] <= lo_[size_t(last)] || hi_[size_t(last)] <= lo_[b]))
        continue;
      children.push_back(int32_t(b));
    }
    uint64_t state = mix(placedHash_ ^ mix(uint64_t(watermark)));
    for (size_t s = 0; s < sections_; ++s) {
      if (rem_[s] == 0) continue;
      if (lowest[s] + rem_[s] > capacity_) return false;
      state = mix(state ^ (uint64_t(floor_[s]) * 0x9e3779b97f4a7c15ull + s));
    }
    if (failed_.count(state)) return false;
    std::sort(children.begin(), children.end(), [&](int32_t a, int32_t b) {
      if (cand_[size_t(a)] != cand_[size_t(b)]) return cand_[size_t(a)] < cand_[size_t(b)];
      return rank_[size_t(a)] < rank_[size_t(b)];
    });
    Undo undo;
    for (size_t k = 0; k < children.size(); ++k) {
      const size_t b = size_t(children[k]);
      const int64_t at = cand_[b];
      place(b, at, undo);
      if (dfs(depth + 1, at, int32_t(b))) return true;
      unplace(b, undo);
      if (timedOut_) return false;
    }
    if (failed_.size() < kMaxFailedStates) failed_.insert(state);
    return false;
  }

  const std::vector<Buffer>& buf_;
  int64_t align_;
  size_t n_, sections_ = 0;
  std::vector<size_t> lo_, hi_;  // sections [lo, hi) each buffer covers
  std::vector<int32_t> rank_;
  std::vector<uint64_t> zobrist_;
  std::vector<std::vector<int32_t>> conflicts_, children_;
  std::vector<int64_t> cand_, offset_, floor_, rem_, lowest_;
  std::vector<char> placed_;
  std::vector<size_t> openConflicts_;  // unplaced buffers sharing time with each buffer
  uint64_t placedHash_ = 0, nodes_ = 0;
  int64_t capacity_ = 0;
  Clock::time_point deadline_;
  bool timedOut_ = false;
  std::unordered_set<uint64_t> failed_;
};

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
  Search search(buffers, alignment);
  if (!search.buildConflicts()) return result;
  result.tooLarge = false;
  // First ask for the lower bound itself (tight capacities prune hardest), then bisect between what is proven and
  // what is found; a probe that runs out of its slice moves the next probe up without proving anything.
  int64_t unknownAbove = lo;  // probes at or below it timed out
  bool first = true;
  while (lo < best) {
    const auto now = Clock::now();
    if (now >= deadline) break;
    const int64_t target = first ? lo : std::max(lo, unknownAbove) + (best - 1 - std::max(lo, unknownAbove)) / 2;
    const auto slice = now + (deadline - now) / (first ? 2 : 3);
    first = false;
    std::vector<int64_t> offsets;
    switch (search.solve(target, slice, offsets)) {
      case Outcome::Found:
        result.placement.offset = std::move(offsets);
        result.placement.arena = arenaOf(buffers, result.placement.offset);
        best = result.placement.arena;
        if (unknownAbove >= best) unknownAbove = lo;  // the slices that timed out above it no longer matter
        break;
      case Outcome::Infeasible:
        lo = target + 1;
        break;
      case Outcome::Timeout:
        if (target >= best - 1) return result;  // nothing left to probe
        unknownAbove = target + 1;
        break;
    }
  }
  result.optimal = lo >= best;
  return result;
}

}  // namespace kiln::memory::detail
