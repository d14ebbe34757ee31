#include "memory/stretch_within_bound.h"

#include <algorithm>
#include <numeric>

namespace kiln::memory {
namespace {

// Live bytes per step: add over a range, maximum over a range (lazy segment tree).
class LiveProfile {
 public:
  explicit LiveProfile(int64_t steps) : n_(std::max<int64_t>(steps, 1)), max_(size_t(4 * n_), 0), add_(size_t(4 * n_), 0) {}
  void add(int64_t lo, int64_t hi, int64_t v) { add(1, 0, n_, lo, hi, v); }
  int64_t max(int64_t lo, int64_t hi) const { return max(1, 0, n_, lo, hi); }

 private:
  void add(size_t node, int64_t l, int64_t r, int64_t lo, int64_t hi, int64_t v) {
    if (hi <= l || r <= lo) return;
    if (lo <= l && r <= hi) {
      max_[node] += v;
      add_[node] += v;
      return;
    }
    const int64_t m = (l + r) / 2;
    add(2 * node, l, m, lo, hi, v);
    add(2 * node + 1, m, r, lo, hi, v);
    max_[node] = add_[node] + std::max(max_[2 * node], max_[2 * node + 1]);
  }
  int64_t max(size_t node, int64_t l, int64_t r, int64_t lo, int64_t hi) const {
    if (hi <= l || r <= lo) return INT64_MIN / 2;
    if (lo <= l && r <= hi) return max_[node];
    const int64_t m = (l + r) / 2;
    return add_[node] + std::max(max(2 * node, l, m, lo, hi), max(2 * node + 1, m, r, lo, hi));
  }

  int64_t n_;
  std::vector<int64_t> max_, add_;
};

}  // namespace

std::vector<Buffer> stretchedWithinBound(const std::vector<Buffer>& blocks, const std::vector<Buffer>& stretched) {
  std::vector<Buffer> out = blocks;
  int64_t steps = 0;
  for (const Buffer& b : stretched) steps = std::max(steps, b.upper);
  LiveProfile live(steps);
  for (const Buffer& b : blocks) live.add(std::max<int64_t>(b.lower, 0), b.upper, b.size);
  const int64_t bound = live.max(0, steps);
  std::vector<size_t> longer;
  for (size_t i = 0; i < blocks.size() && i < stretched.size(); ++i)
    if (stretched[i].upper > blocks[i].upper) longer.push_back(i);
  std::stable_sort(longer.begin(), longer.end(), [&](size_t a, size_t b) { return blocks[a].size < blocks[b].size; });
  for (size_t i : longer) {
    const int64_t lo = blocks[i].upper, hi = stretched[i].upper;
    if (live.max(lo, hi) + blocks[i].size > bound) continue;
    live.add(lo, hi, blocks[i].size);
    out[i].upper = hi;
  }
  return out;
}

}  // namespace kiln::memory
