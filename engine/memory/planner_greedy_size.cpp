// Largest first: big buffers are the hardest to fit into gaps, so they go in while the arena is still empty.
#include <algorithm>
#include <numeric>

#include "memory/planners.h"

namespace kiln::memory::detail {

Placement planGreedySize(const std::vector<Buffer>& buffers, int64_t alignment) {
  std::vector<int32_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  // Ties: the longer-lived buffer constrains more of the others.
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    const Buffer &x = buffers[static_cast<size_t>(a)], &y = buffers[static_cast<size_t>(b)];
    if (x.size != y.size) return x.size > y.size;
    return x.upper - x.lower > y.upper - y.lower;
  });
  Placement p = placeInOrder(buffers, order, alignment);
  p.detail = "size";
  return p;
}

}  // namespace kiln::memory::detail
