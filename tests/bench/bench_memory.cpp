// Memory planning benchmark: every trace in ../shared/traces under every planner (buffers, lower bound, arena,
// arena / lower bound, ms), plus a synthetic 20,000-buffer instance (fixed seed) for best_of's speed. Exact runs
// only where the default planner would try it (small traces), with its default 10 s budget. Prints a table and
// writes JSON; asserts nothing.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "bench_json.h"
#include "memory/memory_plan.h"
#include "memory/trace_csv.h"

using namespace kiln;
using namespace kiln::memory;
namespace fs = std::filesystem;

namespace {

// Lifetimes of a few steps up to the whole horizon, sizes spread over four orders of magnitude: roughly the mix of
// activations and long-lived buffers in the real traces.
std::vector<Buffer> synthetic(size_t n, uint32_t seed) {
  std::mt19937_64 rng(seed);
  const int64_t horizon = int64_t(n);
  std::vector<Buffer> buffers;
  for (size_t i = 0; i < n; ++i) {
    const int64_t lower = int64_t(rng() % uint64_t(horizon));
    const int64_t span = 1 + int64_t(rng() % 4 == 0 ? rng() % uint64_t(horizon / 4) : rng() % 64);
    const int64_t size = int64_t(512) << (rng() % 14);
    buffers.push_back({int64_t(i), lower, std::min(horizon, lower + span), size});
  }
  return buffers;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string jsonPath = argc > 1 ? argv[1] : KILN_BENCH_OUT_DIR "/bench_memory.json";
  std::vector<std::pair<std::string, std::vector<Buffer>>> instances;
  const fs::path dir = fs::path(KILN_SHARED_DIR) / "traces";
  std::error_code ec;
  if (fs::is_directory(dir, ec)) {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".csv") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) instances.emplace_back(f.filename().string(), readTraceCsv(f.string()));
  } else {
    std::fprintf(stderr, "note: %s not found; trace rows skipped\n", dir.c_str());
  }
  instances.emplace_back("synthetic 20k (seed 1)", synthetic(20000, 1));

  std::printf("%-32s %-12s %7s %16s %16s %8s %10s  %s\n", "trace", "planner", "buffers", "lower bound", "arena",
              "ratio", "ms", "detail");
  Json out = Json::array();
  const PlanOptions defaults;
  for (const auto& [name, buffers] : instances) {
    for (const std::string planner : {"none", "greedy_size", "best_of", "exact"}) {
      if (planner == "exact" && buffers.size() > defaults.defaultExactMaxBuffers) continue;
      PlanOptions o;
      o.planner = planner;
      const Plan p = planMemory(buffers, o);
      const std::string problem = validatePlan(buffers, p);
      const double ratio = p.lowerBound > 0 ? double(p.arenaBytes) / double(p.lowerBound) : 1.0;
      std::printf("%-32s %-12s %7zu %16lld %16lld %8.4f %10.1f  %s%s\n", name.c_str(), planner.c_str(), buffers.size(),
                  static_cast<long long>(p.lowerBound), static_cast<long long>(p.arenaBytes), ratio, p.ms,
                  (p.planner == planner ? "" : "-> " + p.planner + ": ").c_str(),
                  problem.empty() ? p.detail.c_str() : ("INVALID: " + problem).c_str());
      std::fflush(stdout);
      Json j = Json::object();
      j.set("trace", name);
      j.set("planner", planner);
      j.set("planner_used", p.planner);
      j.set("detail", p.detail);
      j.set("buffers", static_cast<int64_t>(buffers.size()));
      j.set("lower_bound_bytes", p.lowerBound);
      j.set("arena_bytes", p.arenaBytes);
      j.set("ratio", ratio);
      j.set("ms", p.ms);
      j.set("valid", problem.empty());
      out.push(j);
    }
  }
  std::printf("\ntargets: best_of <= 1.01 x lower bound on somas_*/iopddl_*; exact fits the capacity in minimalloc_*"
              " names within 10 s; best_of on 20k buffers <= 1 s\n");
  return writeBenchJson(out, jsonPath);
}
