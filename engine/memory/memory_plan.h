#pragma once
// Memory planning on abstract buffers: each buffer lives over [lower, upper) in logical time (task order) and needs
// `size` bytes; a plan gives each an offset so that no two buffers live at the same time overlap, in the smallest
// arena. Independent of the graph: Stage 3 derives buffers from the scheduled graph (lifetimes), `kiln plan` reads
// them from a trace, and both plan here.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kiln::memory {

struct Buffer {
  int64_t id = 0;
  int64_t lower = 0;  // first time step it is live
  int64_t upper = 0;  // first time step it is no longer live (upper > lower)
  int64_t size = 0;   // bytes, > 0
};

struct Plan {
  std::string planner;          // "none", "greedy_size", "best_of", "exact" (what actually produced the offsets)
  std::vector<int64_t> offset;  // one per buffer, in the input order
  int64_t arenaBytes = 0;       // max(offset + size)
  int64_t lowerBound = 0;       // the largest total size live at one time: no plan can be smaller
  int64_t alignment = 1;        // every offset is a multiple of it
  double ms = 0;                // planning time
  std::string detail;           // how: the winning ordering of best_of, "optimal" / "budget exhausted" for exact
};

// Everything planMemory takes; the short overload below fills the defaults.
struct PlanOptions {
  std::string planner;             // as for planMemory
  int64_t alignment = 1;
  double exactBudgetMs = 10000;    // the exact search's time budget ("exact"; the default planner uses at most 2 s)
  size_t defaultExactMaxBuffers = 1000;  // the default planner tries exact only up to this many buffers
};

// Plans `buffers` with the named planner ("none", "greedy_size", "best_of", "exact"; "" = the default: best_of,
// then exact when the instance is small enough). Offsets are multiples of `alignment` (sizes are not rounded here:
// callers pass sizes already rounded by their rule). Throws std::invalid_argument for an unknown planner name or a
// malformed buffer (upper <= lower, size <= 0).
Plan planMemory(const std::vector<Buffer>& buffers, const std::string& planner = {}, int64_t alignment = 1);
Plan planMemory(const std::vector<Buffer>& buffers, const PlanOptions& options);

// best_of wanted only if it reaches the lower bound: each ordering is abandoned as soon as it passes the bound, so
// an instance whose plans all miss it costs a fraction of a full best_of. The same plan best_of would give when one
// ordering reaches the bound; nothing otherwise.
std::optional<Plan> planBestOfAtBound(const std::vector<Buffer>& buffers, int64_t alignment);
// The planner names planMemory accepts ("" excluded).
const std::vector<std::string>& plannerNames();

// The largest total size live at any one time.
int64_t lowerBound(const std::vector<Buffer>& buffers);

// Empty when `plan` is valid for `buffers` (one offset each, aligned, non-negative, no two simultaneously-live
// buffers overlap, arenaBytes = max end); otherwise the first problem found, for test messages.
std::string validatePlan(const std::vector<Buffer>& buffers, const Plan& plan);

}  // namespace kiln::memory
