// planMemory: checks the input once, dispatches to a planner, times it. The planners trust what is checked here.
#include "memory/memory_plan.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "memory/planners.h"

namespace kiln::memory {

namespace {

using Clock = std::chrono::steady_clock;

void checkInput(const std::vector<Buffer>& buffers, int64_t alignment) {
  if (alignment < 1) throw std::invalid_argument("alignment " + std::to_string(alignment) + " is not positive");
  if (buffers.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max()))
    throw std::invalid_argument("too many buffers: " + std::to_string(buffers.size()));
  // No plan is larger than `none`'s (every size padded to the alignment): keeping that total well inside int64
  // keeps every offset + size computed by any planner inside it too.
  constexpr int64_t kMaxTotal = std::numeric_limits<int64_t>::max() / 4;
  int64_t total = 0;
  for (size_t i = 0; i < buffers.size(); ++i) {
    const Buffer& b = buffers[i];
    const std::string which = "buffer " + std::to_string(b.id) + " (#" + std::to_string(i) + ")";
    if (b.upper <= b.lower)
      throw std::invalid_argument(which + ": upper " + std::to_string(b.upper) + " is not after lower " +
                                  std::to_string(b.lower));
    if (b.size <= 0) throw std::invalid_argument(which + ": size " + std::to_string(b.size) + " is not positive");
    if (b.size > kMaxTotal - total || alignment > kMaxTotal - total - b.size)
      throw std::invalid_argument(which + ": the total size of the buffers exceeds " + std::to_string(kMaxTotal));
    total += b.size + alignment;
  }
}

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

detail::Placement runExact(const std::vector<Buffer>& buffers, int64_t alignment, detail::Placement incumbent,
                           const char* incumbentName, double budgetMs, std::string& planner) {
  const auto deadline = Clock::now() + std::chrono::microseconds(static_cast<int64_t>(budgetMs * 1000));
  detail::ExactResult r = detail::planExact(buffers, alignment, incumbent, deadline);
  if (!r.placement.offset.empty()) {
    planner = "exact";
    r.placement.detail = r.optimal ? "optimal" : "budget exhausted";
    return std::move(r.placement);
  }
  planner = incumbentName;
  incumbent.detail += r.optimal    ? " (exact: optimal)"
                      : r.tooLarge ? " (exact: too large to search)"
                                   : " (exact: budget exhausted, nothing better)";
  return incumbent;
}

}  // namespace

const std::vector<std::string>& plannerNames() {
  static const std::vector<std::string> names = {"none", "greedy_size", "best_of", "exact"};
  return names;
}

Plan planMemory(const std::vector<Buffer>& buffers, const std::string& planner, int64_t alignment) {
  PlanOptions options;
  options.planner = planner;
  options.alignment = alignment;
  return planMemory(buffers, options);
}

Plan planMemory(const std::vector<Buffer>& buffers, const PlanOptions& options) {
  const std::string& name = options.planner;
  if (!name.empty() && name != "none" && name != "greedy_size" && name != "best_of" && name != "exact")
    throw std::invalid_argument("unknown planner '" + name + "' (none, greedy_size, best_of, exact)");
  const int64_t alignment = options.alignment;
  checkInput(buffers, alignment);
  const auto start = Clock::now();
  Plan plan;
  plan.alignment = alignment;
  plan.lowerBound = lowerBound(buffers);
  detail::Placement result;
  if (name == "none") {
    result = detail::planNone(buffers, alignment);
    plan.planner = name;
  } else if (name == "greedy_size") {
    result = detail::planGreedySize(buffers, alignment);
    plan.planner = name;
  } else {
    result = detail::planBestOf(buffers, alignment);
    plan.planner = "best_of";
    if (name == "exact") {
      result = runExact(buffers, alignment, std::move(result), "best_of", options.exactBudgetMs, plan.planner);
    } else if (name.empty() && buffers.size() <= options.defaultExactMaxBuffers && result.arena > plan.lowerBound) {
      // Small enough for the search to have a chance; short budget, since the default runs unattended.
      const double budget = std::min(options.exactBudgetMs, 2000.0);
      result = runExact(buffers, alignment, std::move(result), "best_of", budget, plan.planner);
    }
  }
  plan.offset = std::move(result.offset);
  plan.arenaBytes = result.arena;
  plan.detail = std::move(result.detail);
  plan.ms = msSince(start);
  return plan;
}

std::optional<Plan> planBestOfAtBound(const std::vector<Buffer>& buffers, int64_t alignment) {
  checkInput(buffers, alignment);
  const auto start = Clock::now();
  Plan plan;
  plan.alignment = alignment;
  plan.lowerBound = lowerBound(buffers);
  detail::Placement result = detail::planBestOf(buffers, alignment, plan.lowerBound);
  if (result.arena < 0) return std::nullopt;
  plan.planner = "best_of";
  plan.offset = std::move(result.offset);
  plan.arenaBytes = result.arena;
  plan.detail = std::move(result.detail);
  plan.ms = msSince(start);
  return plan;
}

}  // namespace kiln::memory
