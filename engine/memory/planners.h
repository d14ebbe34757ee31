#pragma once
// Internal to engine/memory: the planners behind planMemory and what they share. Each planner takes buffers already
// checked by planMemory (upper > lower, size > 0, totals that fit in int64) and returns offsets in input order.
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "memory/memory_plan.h"

namespace kiln::memory::detail {

inline int64_t alignUp(int64_t v, int64_t alignment) { return (v + alignment - 1) / alignment * alignment; }

// max(offset + size) over all buffers (0 when there are none).
int64_t arenaOf(const std::vector<Buffer>& buffers, const std::vector<int64_t>& offsets);

struct Placement {
  std::vector<int64_t> offset;
  int64_t arena = 0;
  std::string detail;
};

// Places the buffers one by one in `order`, each at the lowest aligned offset that leaves it clear of the buffers
// already placed that are live at the same time (first fit). The engine of greedy_size and best_of. Gives up as
// soon as a buffer would end above `limit`: the placement then has an arena above `limit` and must not be used.
Placement placeInOrder(const std::vector<Buffer>& buffers, const std::vector<int32_t>& order, int64_t alignment,
                       int64_t limit = INT64_MAX);

Placement planNone(const std::vector<Buffer>& buffers, int64_t alignment);
Placement planGreedySize(const std::vector<Buffer>& buffers, int64_t alignment);
// With `limit`, only a placement within it is wanted: each ordering gives up once it passes the limit, and when all
// do the result has arena -1.
Placement planBestOf(const std::vector<Buffer>& buffers, int64_t alignment, int64_t limit = INT64_MAX);

struct ExactResult {
  Placement placement;  // empty offsets when the search found nothing better than `incumbent`
  bool optimal = false;
  bool tooLarge = false;  // not searched: over the buffer or conflict-pair caps
};
// Complete search over canonical placements for an arena below incumbent.arena, stopping at `deadline`.
ExactResult planExact(const std::vector<Buffer>& buffers, int64_t alignment, const Placement& incumbent,
                      std::chrono::steady_clock::time_point deadline);

}  // namespace kiln::memory::detail
