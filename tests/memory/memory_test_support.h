#pragma once
// What the memory tests share: random instances with a fixed seed, and a brute-force optimum written separately
// from the planners (first fit over every order: sorting any optimal plan by offset and placing first-fit in that
// order never raises an offset, so the best order reaches the optimum).
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "memory/memory_plan.h"

namespace kiln::memory::test {

inline std::vector<Buffer> randomBuffers(uint32_t seed, size_t n, int64_t horizon, int64_t maxSize) {
  std::mt19937 rng(seed);
  std::vector<Buffer> buffers;
  for (size_t i = 0; i < n; ++i) {
    const int64_t lower = int64_t(rng() % uint64_t(horizon));
    const int64_t upper = lower + 1 + int64_t(rng() % uint64_t(horizon - lower));
    buffers.push_back({int64_t(i), lower, upper, 1 + int64_t(rng() % uint64_t(maxSize))});
  }
  return buffers;
}

inline int64_t bruteForceOptimum(const std::vector<Buffer>& b, int64_t alignment) {
  std::vector<size_t> order(b.size());
  std::iota(order.begin(), order.end(), 0);
  int64_t best = INT64_MAX;
  do {
    std::vector<int64_t> at(b.size(), -1);
    int64_t arena = 0;
    for (size_t k = 0; k < order.size(); ++k) {
      const size_t i = order[k];
      int64_t offset = 0;
      for (bool moved = true; moved;) {
        moved = false;
        for (size_t m = 0; m < k; ++m) {
          const size_t j = order[m];
          const bool sameTime = b[i].lower < b[j].upper && b[j].lower < b[i].upper;
          if (sameTime && offset < at[j] + b[j].size && at[j] < offset + b[i].size) {
            offset = (at[j] + b[j].size + alignment - 1) / alignment * alignment;
            moved = true;
          }
        }
      }
      at[i] = offset;
      arena = std::max(arena, offset + b[i].size);
    }
    best = std::min(best, arena);
  } while (std::next_permutation(order.begin(), order.end()));
  return best;
}

}  // namespace kiln::memory::test
