// First-fit placement in a given order, fast enough for tens of thousands of buffers.
//
// The placed buffers are rectangles in (time × offset). A segment tree over the distinct time points stores each
// rectangle at its O(log T) canonical nodes ("covers": the rectangles spanning that node's whole time range, which
// therefore never overlap each other in offset) and in the subtree unions of those nodes and their ancestors
// ("below"). The rectangles live at some time of a query range are exactly: `below` of the query's canonical
// nodes plus `covers` of their strict ancestors, O(log T) sets. Each set keeps only the union of its intervals as
// merged blocks, so finding the lowest free gap jumps over whole stacks at once instead of visiting (or sorting)
// every overlapping buffer: scanning the k overlapping buffers in offset order costs O(k log k) per placement,
// which on 30k-buffer traces with thousands live at once is seconds.
#include <algorithm>
#include <iterator>
#include <utility>

#include "memory/planners.h"

namespace kiln::memory::detail {

int64_t arenaOf(const std::vector<Buffer>& buffers, const std::vector<int64_t>& offsets) {
  int64_t arena = 0;
  for (size_t i = 0; i < buffers.size(); ++i) arena = std::max(arena, offsets[i] + buffers[i].size);
  return arena;
}

namespace {

// A union of [offset, end) intervals as disjoint, non-touching blocks sorted by offset. A flat vector: merging
// keeps the sets short, and short sorted vectors beat tree nodes on both lookups and inserts.
class BlockSet {
 public:
  bool empty() const { return blocks_.empty(); }

  void add(int64_t begin, int64_t end) {
    // First block that could touch [begin, end): the one before the first block starting after `begin`.
    auto it = std::upper_bound(blocks_.begin(), blocks_.end(), begin, startsAfter);
    if (it != blocks_.begin() && std::prev(it)->second >= begin) --it;
    auto last = it;
    while (last != blocks_.end() && last->first <= end) ++last;
    if (it == last) {
      blocks_.insert(it, {begin, end});
      return;
    }
    it->first = std::min(it->first, begin);
    it->second = std::max(std::prev(last)->second, end);
    blocks_.erase(it + 1, last);
  }

  // The end of a block meeting [at, at + size), or -1 when that range is free here.
  int64_t blockingEnd(int64_t at, int64_t size) const {
    auto it = std::upper_bound(blocks_.begin(), blocks_.end(), at, startsAfter);
    if (it != blocks_.begin() && std::prev(it)->second > at) return std::prev(it)->second;
    if (it != blocks_.end() && it->first < at + size) return it->second;
    return -1;
  }

 private:
  static bool startsAfter(int64_t v, const std::pair<int64_t, int64_t>& block) { return v < block.first; }
  std::vector<std::pair<int64_t, int64_t>> blocks_;
};

class Skyline {
 public:
  explicit Skyline(const std::vector<Buffer>& buffers) {
    times_.reserve(buffers.size() * 2);
    for (const Buffer& b : buffers) {
      times_.push_back(b.lower);
      times_.push_back(b.upper);
    }
    std::sort(times_.begin(), times_.end());
    times_.erase(std::unique(times_.begin(), times_.end()), times_.end());
    leaves_ = 1;
    while (leaves_ < times_.size()) leaves_ *= 2;
    covers_.resize(2 * leaves_);
    below_.resize(2 * leaves_);
  }

  size_t slot(int64_t time) const {
    return static_cast<size_t>(std::lower_bound(times_.begin(), times_.end(), time) - times_.begin());
  }

  // The lowest multiple of `alignment` where [at, at + size) is free over the slots [lo, hi).
  int64_t lowestFit(size_t lo, size_t hi, int64_t size, int64_t alignment) {
    collect(lo, hi);
    int64_t at = 0;
    for (bool moved = true; moved;) {
      moved = false;
      for (const BlockSet* s : query_)
        for (int64_t end; (end = s->blockingEnd(at, size)) >= 0; moved = true) at = alignUp(end, alignment);
    }
    return at;
  }

  void insert(size_t lo, size_t hi, int64_t begin, int64_t end) {
    collect(lo, hi);
    for (size_t c : canonical_) covers_[c].add(begin, end);
    for (size_t c : canonical_)
      for (size_t n = c; n >= 1 && !marked(n); n /= 2) mark(n), below_[n].add(begin, end);
    marks_.clear();
  }

 private:
  // The canonical nodes of [lo, hi) and the sets a query over it must look at.
  void collect(size_t lo, size_t hi) {
    canonical_.clear();
    query_.clear();
    for (size_t l = lo + leaves_, r = hi + leaves_; l < r; l /= 2, r /= 2) {
      if (l & 1) canonical_.push_back(l++);
      if (r & 1) canonical_.push_back(--r);
    }
    for (size_t c : canonical_) {
      if (!below_[c].empty()) query_.push_back(&below_[c]);
      for (size_t n = c / 2; n >= 1 && !marked(n); n /= 2) {
        mark(n);
        if (!covers_[n].empty()) query_.push_back(&covers_[n]);
      }
    }
    marks_.clear();
  }

  bool marked(size_t n) const { return std::find(marks_.begin(), marks_.end(), n) != marks_.end(); }
  void mark(size_t n) { marks_.push_back(n); }

  std::vector<int64_t> times_;
  size_t leaves_ = 1;
  std::vector<BlockSet> covers_, below_;
  std::vector<size_t> canonical_, marks_;
  std::vector<const BlockSet*> query_;
};

}  // namespace

Placement placeInOrder(const std::vector<Buffer>& buffers, const std::vector<int32_t>& order, int64_t alignment,
                       int64_t limit) {
  Skyline sky(buffers);
  Placement p;
  p.offset.assign(buffers.size(), 0);
  for (int32_t i : order) {
    const Buffer& b = buffers[static_cast<size_t>(i)];
    const size_t lo = sky.slot(b.lower), hi = sky.slot(b.upper);
    const int64_t at = sky.lowestFit(lo, hi, b.size, alignment);
    p.offset[static_cast<size_t>(i)] = at;
    p.arena = std::max(p.arena, at + b.size);
    if (p.arena > limit) return p;
    sky.insert(lo, hi, at, at + b.size);
  }
  return p;
}

}  // namespace kiln::memory::detail
