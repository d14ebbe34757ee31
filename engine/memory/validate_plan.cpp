// An independent check of any plan: a sweep over time keeping the live buffers ordered by offset. Shares no code
// with the planners, so a planner bug cannot hide behind the same bug here.
#include <algorithm>
#include <limits>
#include <iterator>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "memory/memory_plan.h"

namespace kiln::memory {

namespace {

std::string name(const std::vector<Buffer>& buffers, size_t i) {
  return "buffer " + std::to_string(buffers[i].id) + " (#" + std::to_string(i) + ")";
}

}  // namespace

std::string validatePlan(const std::vector<Buffer>& buffers, const Plan& plan) {
  if (plan.offset.size() != buffers.size())
    return std::to_string(plan.offset.size()) + " offsets for " + std::to_string(buffers.size()) + " buffers";
  if (plan.alignment < 1) return "alignment " + std::to_string(plan.alignment) + " is not positive";
  int64_t maxEnd = 0;
  for (size_t i = 0; i < buffers.size(); ++i) {
    const Buffer& b = buffers[i];
    const int64_t off = plan.offset[i];
    if (b.upper <= b.lower || b.size <= 0) return name(buffers, i) + " is malformed";
    if (off < 0) return name(buffers, i) + " has a negative offset " + std::to_string(off);
    if (off % plan.alignment != 0)
      return name(buffers, i) + " offset " + std::to_string(off) + " is not a multiple of " +
             std::to_string(plan.alignment);
    if (off > std::numeric_limits<int64_t>::max() - b.size) return name(buffers, i) + " ends beyond int64";
    maxEnd = std::max(maxEnd, off + b.size);
  }
  if (plan.arenaBytes != maxEnd)
    return "arenaBytes " + std::to_string(plan.arenaBytes) + " but the buffers end at " + std::to_string(maxEnd);

  // Events (time, kind, index): releases (kind 0) before acquisitions (kind 1) at the same time.
  std::vector<std::tuple<int64_t, int, size_t>> events;
  events.reserve(buffers.size() * 2);
  for (size_t i = 0; i < buffers.size(); ++i) {
    events.emplace_back(buffers[i].lower, 1, i);
    events.emplace_back(buffers[i].upper, 0, i);
  }
  std::sort(events.begin(), events.end());
  // The live buffers never overlap each other (checked on every insertion), so each newcomer only needs checking
  // against its two neighbours in offset order.
  std::set<std::pair<int64_t, size_t>> live;
  for (const auto& [time, kind, i] : events) {
    const std::pair<int64_t, size_t> key{plan.offset[i], i};
    if (kind == 0) {
      live.erase(key);
      continue;
    }
    auto next = live.lower_bound(key);
    if (next != live.end() && next->first < key.first + buffers[i].size)
      return name(buffers, i) + " overlaps " + name(buffers, next->second) + " at time " + std::to_string(time);
    if (next != live.begin()) {
      auto prev = std::prev(next);
      if (prev->first + buffers[prev->second].size > key.first)
        return name(buffers, i) + " overlaps " + name(buffers, prev->second) + " at time " + std::to_string(time);
    }
    live.insert(next, key);
  }
  return {};
}

}  // namespace kiln::memory
