// The depth-first decision search of planner "exact" (its rules are listed, with why they are safe, at the top of
// planner_exact.cpp). Every rule here keeps one particular solution reachable whenever any exists, the witness: the
// one with the smallest sum of offset x size^2 (equal twins in rank order), where no buffer can move down. In it each
// buffer sits at the aligned highest end of the buffers below it that share its time, so placing its buffers in
// (offset, rank) order puts each at its "candidate" offset (the aligned highest end of the placed buffers it
// conflicts with) with offsets never decreasing.
#include "memory/exact_search.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "memory/planners.h"

namespace kiln::memory::detail {

namespace {

constexpr int64_t kNone = std::numeric_limits<int64_t>::max();
constexpr size_t kMaxFailedSlots = size_t{1} << 22;  // 64 MiB of 128-bit keys at most

uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

void ExactSearch::FailedStates::clear() {
  if (slots_.empty()) slots_.resize(size_t{1} << 12);
  std::fill(slots_.begin(), slots_.end(), std::pair<uint64_t, uint64_t>{0, 0});
  used_ = 0;
}

bool ExactSearch::FailedStates::contains(std::pair<uint64_t, uint64_t> key) const {
  const size_t mask = slots_.size() - 1;
  for (size_t i = key.first & mask;; i = (i + 1) & mask) {
    if (slots_[i] == key) return true;
    if (slots_[i].first == 0 && slots_[i].second == 0) return false;
  }
}

void ExactSearch::FailedStates::insert(std::pair<uint64_t, uint64_t> key) {
  if (2 * (used_ + 1) > slots_.size()) {
    if (slots_.size() >= kMaxFailedSlots) return;  // full: forget nothing, learn nothing more
    std::vector<std::pair<uint64_t, uint64_t>> old(slots_.size() * 2, {0, 0});
    old.swap(slots_);
    used_ = 0;
    for (const auto& k : old)
      if (k.first != 0 || k.second != 0) insert(k);
  }
  const size_t mask = slots_.size() - 1;
  for (size_t i = key.first & mask;; i = (i + 1) & mask) {
    if (slots_[i] == key) return;
    if (slots_[i].first == 0 && slots_[i].second == 0) {
      slots_[i] = key;
      ++used_;
      return;
    }
  }
}

ExactSearch::ExactSearch(const std::vector<Buffer>& buffers, int64_t alignment, const ExactInstance& instance)
    : buf_(buffers), align_(alignment), inst_(instance), n_(buffers.size()) {
  acc_.assign(inst_.sections, 0);
  low_.assign(inst_.sections, 0);
  top1_.assign(inst_.sections, 0);
  top2_.assign(inst_.sections, 0);
  who1_.assign(inst_.sections, -1);
  topStamp_s_.assign(inst_.sections, 0);
  accStamp_.assign(inst_.sections, 0);
}

Outcome ExactSearch::solve(int64_t capacity, size_t strategy, uint64_t nodeLimit, Clock::time_point deadline,
                           std::vector<int64_t>& offsets) {
  if (capacity > memoCapacity_) failed_.clear();  // a state that failed under a smaller capacity may fit now
  memoCapacity_ = capacity;
  capacity_ = capacity;
  strategy_ = strategy;
  rank_ = inst_.ranks[strategy % inst_.ranks.size()];
  twinOrder_ = strategy < inst_.ranks.size();
  nodes_ = 0;
  nodeLimit_ = nodeLimit;
  deadline_ = deadline;
  stopped_ = false;
  cand_.assign(n_, 0);
  offset_.assign(n_, 0);
  placed_.assign(n_, 0);
  trail_.clear();
  columnTrail_.clear();
  columnTop_.assign(inst_.sections, 0);
  columnLeft_.assign(inst_.sections, 0);
  for (size_t b = 0; b < n_; ++b)
    for (size_t s = inst_.lo[b]; s < inst_.hi[b]; ++s) columnLeft_[s] += buf_[b].size;
  std::vector<int32_t> all(n_);
  std::iota(all.begin(), all.end(), 0);
  const Outcome result = dfs(all, 0, -1, 0);
  totalNodes_ += nodes_;
  if (result == Outcome::Found) offsets = offset_;
  return result;
}

// The placed twin (same section run) that ends exactly at b's candidate, or -1. Two twins stacked directly one on
// the other can trade places (b at the lower one's offset, the lower one on top of b): the pair covers the same bytes
// over the same sections and nothing else moves. When sizes are multiples of the alignment, that swap lowers the sum
// of offsets by the size difference, so the witness never has the larger twin directly under the smaller one; equal
// twins are interchangeable, and the witness is taken with them in rank order.
int32_t ExactSearch::twinBelow(size_t b) const {
  if (buf_[b].size % align_ != 0) return -1;
  for (int32_t t : inst_.twins[b])
    if (placed_[size_t(t)] && buf_[size_t(t)].size % align_ == 0 &&
        offset_[size_t(t)] + buf_[size_t(t)].size == cand_[b])
      return t;
  return -1;
}

void ExactSearch::place(size_t b, int64_t at) {
  placed_[b] = 1;
  offset_[b] = at;
  trail_.emplace_back(-1 - int32_t(b), int64_t(columnTrail_.size()));
  const int64_t above = alignUp(at + buf_[b].size, align_);
  for (size_t s = inst_.lo[b]; s < inst_.hi[b]; ++s) {
    columnLeft_[s] -= buf_[b].size;
    if (columnTop_[s] < above) columnTrail_.emplace_back(s, columnTop_[s]), columnTop_[s] = above;
  }
  for (int32_t q : inst_.conflicts[b])
    if (!placed_[size_t(q)] && cand_[size_t(q)] < above) {
      trail_.emplace_back(q, cand_[size_t(q)]);
      cand_[size_t(q)] = above;
    }
}

void ExactSearch::unwindTo(size_t mark) {
  while (trail_.size() > mark) {
    const auto [who, previous] = trail_.back();
    trail_.pop_back();
    if (who < 0) {
      const size_t b = size_t(-1 - who);
      placed_[b] = 0;
      for (size_t s = inst_.lo[b]; s < inst_.hi[b]; ++s) columnLeft_[s] += buf_[b].size;
      for (; columnTrail_.size() > size_t(previous); columnTrail_.pop_back())
        columnTop_[columnTrail_.back().first] = columnTrail_.back().second;
    } else
      cand_[size_t(who)] = previous;
  }
}

// The cheap form of the section bound, kept up to date by place/unwindTo: in every section the buffers left stack
// above both the watermark and the highest end placed there (they share time with everything placed there). Tried on
// each child before it costs a node; the full bound below is stronger.
bool ExactSearch::columnsOverflow(int64_t watermark, size_t from, size_t to) const {
  for (size_t s = from; s < to; ++s)
    if (columnLeft_[s] > 0 && std::max(watermark, columnTop_[s]) > capacity_ - columnLeft_[s]) return true;
  return false;
}

// The unplaced buffers of a section must stack above their lowest possible offsets: with them sorted by that offset
// t, everything that cannot start below t needs t + its total size <= capacity (single-machine scheduling with
// release dates: this is exactly when one column of the section fits). Checked per section as the sweep goes from the
// highest t down.
// The special case t = the lowest offset in the section needs no sort, and most failing states fail it: checked on
// its own first, before the state's key is even computed.
bool ExactSearch::quickOverflow(const std::vector<int32_t>& members, const std::vector<int64_t>& lowest) {
  if (++stamp_ == 0) std::fill(accStamp_.begin(), accStamp_.end(), 0), stamp_ = 1;
  for (size_t k = 0; k < members.size(); ++k) {
    const size_t b = size_t(members[k]);
    for (size_t s = inst_.lo[b]; s < inst_.hi[b]; ++s) {
      if (accStamp_[s] != stamp_) accStamp_[s] = stamp_, acc_[s] = 0, low_[s] = lowest[k];
      acc_[s] += buf_[b].size;
      low_[s] = std::min(low_[s], lowest[k]);
    }
  }
  for (size_t k = 0; k < members.size(); ++k) {
    const size_t b = size_t(members[k]);
    for (size_t s = inst_.lo[b]; s < inst_.hi[b]; ++s)
      if (low_[s] > capacity_ - acc_[s]) return true;
  }
  return false;
}

bool ExactSearch::fullOverflow(const std::vector<int32_t>& members, const std::vector<int64_t>& lowest) {
  std::vector<std::pair<int64_t, int32_t>> byLowest(members.size());
  for (size_t k = 0; k < members.size(); ++k) byLowest[k] = {lowest[k], members[k]};
  std::sort(byLowest.begin(), byLowest.end(), std::greater<>());
  if (++stamp_ == 0) std::fill(accStamp_.begin(), accStamp_.end(), 0), stamp_ = 1;
  for (const auto& [at, who] : byLowest) {
    const size_t b = size_t(who);
    const int64_t room = capacity_ - at;
    for (size_t s = inst_.lo[b]; s < inst_.hi[b]; ++s) {
      if (accStamp_[s] != stamp_) accStamp_[s] = stamp_, acc_[s] = 0;
      if ((acc_[s] += buf_[b].size) > room) return true;
    }
  }
  return false;
}

// Everything the rest of the search from this state depends on: which buffers are left and their candidate offsets
// (later candidates follow from these and the placements to come), the watermark, the rank the next buffer at the
// watermark must exceed, and the preorder.
std::pair<uint64_t, uint64_t> ExactSearch::stateKey(const std::vector<int32_t>& members, int64_t watermark,
                                                    int32_t last, uint64_t context) const {
  uint64_t h1 = 0, h2 = 0;
  for (int32_t b : members) {
    // The twin under b's candidate decides whether b may go there (twinBelow), so it is part of the state.
    const uint64_t c = uint64_t(cand_[size_t(b)]) ^ (uint64_t(twinBelow(size_t(b)) + 1) << 44);
    h1 += mix((uint64_t(b) << 20) ^ mix(c));
    h2 += mix(mix(uint64_t(b) + 0x5bd1e995ull) ^ (c * 0x9e3779b97f4a7c15ull));
  }
  const uint64_t lastRank = last < 0 ? 0 : uint64_t(rank_[size_t(last)]) + 1;
  const uint64_t tail = mix(uint64_t(watermark)) ^ mix((lastRank << 8) | strategy_) ^ mix(context + 0x632be59bd9b4e019ull);
  h1 = mix(h1 ^ tail);
  h2 = mix(h2 + mix(tail ^ 0x27d4eb2f165667c5ull));
  if (h1 == 0 && h2 == 0) h1 = 1;  // (0, 0) marks an empty slot
  return {h1, h2};
}

// The buffers left fall apart into groups whose section runs do not meet (no buffer crosses between them): the groups
// never share time, so each is placed on its own, above what is placed already, from watermark 0 (a relaxation:
// the order constraints tie buffers only within one group). Returns Unknown without searching when there is one group.
Outcome ExactSearch::solveApart(const std::vector<int32_t>& members) {
  std::vector<int32_t> byLo = members;
  std::sort(byLo.begin(), byLo.end(), [&](int32_t a, int32_t b) { return inst_.lo[size_t(a)] < inst_.lo[size_t(b)]; });
  std::vector<std::vector<int32_t>> groups(1);
  size_t reach = inst_.hi[size_t(byLo.front())];
  for (int32_t b : byLo) {
    if (inst_.lo[size_t(b)] >= reach) groups.emplace_back();
    groups.back().push_back(b);
    reach = std::max(reach, inst_.hi[size_t(b)]);
  }
  if (groups.size() == 1) return Outcome::Unknown;
  ++stats_.splits;
  // Small groups first: they are cheap, and one that cannot be placed settles the whole state.
  std::stable_sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) { return a.size() < b.size(); });
  // Each group is ranked afresh by what is left in it; the ranking depends only on the group's buffers, so their set
  // names it in the memo.
  std::vector<int32_t> saved(members.size());
  for (size_t k = 0; k < members.size(); ++k) saved[k] = rank_[size_t(members[k])];
  const size_t mark = trail_.size();
  Outcome result = Outcome::Found;
  for (const auto& g : groups) {
    rankGroup(buf_, inst_, strategy_, g, rank_);
    uint64_t context = 0x8f1bbcdcca62c1d6ull;
    for (int32_t b : g) context += mix(uint64_t(b) ^ 0x3c6ef372fe94f82bull);
    result = dfs(g, 0, -1, mix(context));
    if (result != Outcome::Found) {
      unwindTo(mark);
      break;
    }
  }
  for (size_t k = 0; k < members.size(); ++k) rank_[size_t(members[k])] = saved[k];
  return result;
}

Outcome ExactSearch::dfs(const std::vector<int32_t>& group, int64_t watermark, int32_t last, uint64_t context) {
  if (++nodes_ > nodeLimit_ || ((nodes_ & 255) == 0 && Clock::now() > deadline_)) stopped_ = true;
  if (stopped_) return Outcome::Unknown;
  std::vector<int32_t> members;
  members.reserve(group.size());
  for (int32_t b : group)
    if (!placed_[size_t(b)]) members.push_back(b);
  if (members.empty()) return Outcome::Found;

  // The lowest offset each buffer left can still take, and the lowest end any of them can reach.
  std::vector<int64_t> lowest(members.size());
  int64_t lowestTop = kNone;
  bool anyUnder = false;
  for (size_t k = 0; k < members.size(); ++k) {
    const size_t b = size_t(members[k]);
    const int64_t size = buf_[b].size, top = cand_[b] + size;
    // Gap rule: at its candidate it would end at or under the watermark, where nothing else will go: it could sink
    // there in any completion, so none of them is the witness.
    if (top <= watermark) return ++stats_.gap, Outcome::Infeasible;
    lowestTop = std::min(lowestTop, top);
    lowest[k] = std::max(cand_[b], watermark);
    anyUnder = anyUnder || cand_[b] < watermark;
  }
  if (anyUnder) {
    // Under the watermark a buffer can only rest on one placed later (sharing a section with it), so no lower than
    // the lowest end one of them can reach; none left means a dead end. Per section: the two lowest such ends.
    if (++topStamp_ == 0) std::fill(topStamp_s_.begin(), topStamp_s_.end(), 0), topStamp_ = 1;
    for (size_t k = 0; k < members.size(); ++k) {
      const size_t b = size_t(members[k]);
      const int64_t end = lowest[k] + buf_[b].size;
      for (size_t s = inst_.lo[b]; s < inst_.hi[b]; ++s) {
        if (topStamp_s_[s] != topStamp_) topStamp_s_[s] = topStamp_, top1_[s] = top2_[s] = kNone, who1_[s] = -1;
        if (end < top1_[s])
          top2_[s] = top1_[s], top1_[s] = end, who1_[s] = int32_t(b);
        else if (end < top2_[s])
          top2_[s] = end;
      }
    }
    for (size_t k = 0; k < members.size(); ++k) {
      const size_t b = size_t(members[k]);
      if (cand_[b] >= watermark) continue;
      int64_t restsOn = kNone;
      for (size_t s = inst_.lo[b]; s < inst_.hi[b]; ++s)
        restsOn = std::min(restsOn, who1_[s] == int32_t(b) ? top2_[s] : top1_[s]);
      if (restsOn == kNone) return Outcome::Infeasible;
      lowest[k] = alignUp(restsOn, align_);
    }
  }
  for (size_t k = 0; k < members.size(); ++k)
    if (lowest[k] > capacity_ - buf_[size_t(members[k])].size) return Outcome::Infeasible;
  if (quickOverflow(members, lowest)) return ++stats_.sections, Outcome::Infeasible;
  const auto key = stateKey(members, watermark, last, context);
  if (failed_.contains(key)) return ++stats_.memo, Outcome::Infeasible;
  if (fullOverflow(members, lowest)) return ++stats_.sections, Outcome::Infeasible;

  const Outcome apart = solveApart(members);
  if (apart == Outcome::Found || stopped_) return apart;
  if (apart == Outcome::Infeasible) {
    failed_.insert(key);
    return apart;
  }

  const std::vector<int32_t>& rank = rank_;
  const std::vector<int32_t>& twinRank = inst_.ranks[strategy_ % inst_.ranks.size()];
  std::vector<int32_t> children;
  for (int32_t b : members) {
    const int64_t at = cand_[size_t(b)];
    if (at < watermark) continue;  // placed later, on a buffer not yet placed
    // Gap rule: another buffer left could end at or below this offset; placed here, everything still to come sits
    // at or above it, so that one could sink into the gap in any completion.
    if (at >= lowestTop) {
      ++stats_.gap;
      continue;
    }
    // Buffers placed one after another at the same offset never share time, so their order does not matter: only
    // increasing rank is explored.
    if (at == watermark && last >= 0 && rank[size_t(b)] < rank[size_t(last)]) continue;
    if (twinOrder_) {
      // Stack order: never a twin directly on a smaller one, or on an equal one of higher rank. The rank here is the
      // preorder's over all buffers, never a group's: the twin underneath may have been placed before the split,
      // and the witness orders equal twins by one ranking throughout.
      const int32_t t = twinBelow(size_t(b));
      if (t >= 0) {
        const int64_t under = buf_[size_t(t)].size, over = buf_[size_t(b)].size;
        if (under < over || (under == over && twinRank[size_t(t)] > twinRank[size_t(b)])) {
          ++stats_.twins;
          continue;
        }
      }
    }
    children.push_back(b);
  }
  std::sort(children.begin(), children.end(), [&](int32_t a, int32_t b) {
    if (cand_[size_t(a)] != cand_[size_t(b)]) return cand_[size_t(a)] < cand_[size_t(b)];
    return rank[size_t(a)] < rank[size_t(b)];
  });
  size_t from = inst_.sections, to = 0;  // the sections this group's buffers span
  for (int32_t b : members) from = std::min(from, inst_.lo[size_t(b)]), to = std::max(to, inst_.hi[size_t(b)]);
  for (int32_t c : children) {
    const size_t mark = trail_.size();
    const int64_t at = cand_[size_t(c)];
    place(size_t(c), at);
    if (columnsOverflow(at, from, to)) {
      ++stats_.sections;
      unwindTo(mark);
      continue;
    }
    const Outcome r = dfs(members, at, c, context);
    if (r == Outcome::Found) return r;
    unwindTo(mark);
    if (r == Outcome::Unknown) return r;
  }
  failed_.insert(key);
  return Outcome::Infeasible;
}

}  // namespace kiln::memory::detail
