// The lower bound every planner is measured against: the peak of the live-bytes profile.
#include <algorithm>
#include <utility>

#include "memory/memory_plan.h"

namespace kiln::memory {

int64_t lowerBound(const std::vector<Buffer>& buffers) {
  // (time, delta): at equal times the releases (negative) sort first, because [lower, upper) intervals that touch
  // do not overlap.
  std::vector<std::pair<int64_t, int64_t>> events;
  events.reserve(buffers.size() * 2);
  for (const Buffer& b : buffers) {
    events.emplace_back(b.lower, b.size);
    events.emplace_back(b.upper, -b.size);
  }
  std::sort(events.begin(), events.end());
  int64_t live = 0, peak = 0;
  for (const auto& [time, delta] : events) {
    live += delta;
    peak = std::max(peak, live);
  }
  return peak;
}

}  // namespace kiln::memory
