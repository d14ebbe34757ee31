// kiln plan TRACE.csv [--planner P] [--alignment N] [--budget-ms MS] [--json]: plans a memory trace (one buffer per
// row: id,lower,upper,size) and reports the arena against the lower bound.
#include <cstdio>
#include <iostream>
#include <stdexcept>

#include "cli/args.h"
#include "cli/commands.h"
#include "memory/memory_plan.h"
#include "memory/trace_csv.h"
#include "util/json.h"
#include "util/units.h"

namespace kiln::cli {

int runPlan(const Argv& argv) {
  const Args args = parseArgs(argv, {{"--json"}, {"--planner", "--alignment", "--budget-ms"}});
  if (args.positional.size() != 1)
    throw UsageError("usage: kiln plan TRACE.csv [--planner none|greedy_size|best_of|exact] [--alignment N] "
                     "[--budget-ms MS] [--json]");
  memory::PlanOptions options;
  options.planner = args.value("--planner").value_or("");
  if (!options.planner.empty()) {
    bool known = false;
    for (const std::string& name : memory::plannerNames()) known = known || name == options.planner;
    if (!known) throw UsageError("unknown planner '" + options.planner + "' (none, greedy_size, best_of, exact)");
  }
  options.alignment = args.intValue("--alignment", 1, int64_t{1} << 30).value_or(1);
  if (const auto budget = args.intValue("--budget-ms", 0, 3'600'000)) options.exactBudgetMs = double(*budget);
  const std::string& path = args.positional[0];
  const std::vector<memory::Buffer> buffers = memory::readTraceCsv(path);
  memory::Plan plan;
  try {
    plan = memory::planMemory(buffers, options);
  } catch (const std::invalid_argument& e) {
    throw LoadError(path, e.what());  // the reader's limits make this rare; still the file's fault
  }
  const double ratio = plan.lowerBound > 0 ? double(plan.arenaBytes) / double(plan.lowerBound) : 1.0;
  if (args.has("--json")) {
    Json j = Json::object();
    j.set("file", path);
    j.set("buffers", static_cast<int64_t>(buffers.size()));
    j.set("arena_bytes", plan.arenaBytes);
    j.set("lower_bound_bytes", plan.lowerBound);
    j.set("ratio", ratio);
    j.set("planner", plan.planner);
    j.set("detail", plan.detail);
    j.set("alignment", plan.alignment);
    j.set("ms", plan.ms);
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  char ratioText[32];
  std::snprintf(ratioText, sizeof ratioText, "%.4f", ratio);
  std::cout << "buffers      " << withThousands(static_cast<int64_t>(buffers.size())) << "\n"
            << "arena        " << withThousands(plan.arenaBytes) << " bytes (" << formatBytes(double(plan.arenaBytes))
            << ")\n"
            << "lower bound  " << withThousands(plan.lowerBound) << " bytes (" << formatBytes(double(plan.lowerBound))
            << ")\n"
            << "ratio        " << ratioText << "\n"
            << "planner      " << plan.planner << (plan.detail.empty() ? "" : " (" + plan.detail + ")") << "\n"
            << "time         " << formatDuration(plan.ms / 1000.0) << "\n";
  return 0;
}

}  // namespace kiln::cli
