// Every trace in ../shared/traces: best_of validated against the lower bound, and the exact search on the
// MiniMalloc set against the capacity its file name carries (name.CAPACITY.csv): valid and never worse than
// best_of; whether it fits is printed. Ratios are printed.
#include <QtTest>

#include <filesystem>

#include "memory/memory_plan.h"
#include "memory/trace_csv.h"

using namespace kiln::memory;
namespace fs = std::filesystem;

namespace {

std::vector<fs::path> traces() {
  std::vector<fs::path> files;
  const fs::path dir = fs::path(KILN_SHARED_DIR) / "traces";
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".csv") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

// "minimalloc_A.1048576.csv" -> 1048576; 0 when the name carries no capacity.
int64_t capacityInName(const fs::path& file) {
  const std::string ext = file.stem().extension().string();  // ".1048576"
  if (ext.size() < 2) return 0;
  int64_t v = 0;
  for (char c : ext.substr(1)) {
    if (c < '0' || c > '9') return 0;
    v = v * 10 + (c - '0');
  }
  return v;
}

}  // namespace

class MemoryTracesTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    if (traces().empty())
      QSKIP(qPrintable(QString("no traces in %1/traces (the shared corpus is not checked out)").arg(KILN_SHARED_DIR)));
  }

  void bestOfOnEveryTrace() {
    for (const fs::path& file : traces()) {
      const std::string name = file.filename().string();
      const auto buffers = readTraceCsv(file.string());
      const Plan plan = planMemory(buffers, "best_of");
      QVERIFY2(validatePlan(buffers, plan).empty(), name.c_str());
      const double ratio = double(plan.arenaBytes) / double(plan.lowerBound);
      qInfo("%-32s %6zu buffers  arena/lower bound %.4f  (%s, %.0f ms)", name.c_str(), buffers.size(), ratio,
            plan.detail.c_str(), plan.ms);
      // The published heuristics reach +0.3% to +1.6% on the SOMAS and iopddl traces.
      if (name.starts_with("somas_") || name.starts_with("iopddl_")) QVERIFY2(ratio <= 1.01, name.c_str());
    }
  }

  void exactFitsTheCapacityInTheName() {
    int fitted = 0, total = 0;
    for (const fs::path& file : traces()) {
      const int64_t capacity = capacityInName(file);
      if (capacity == 0) continue;
      const std::string name = file.filename().string();
      const auto buffers = readTraceCsv(file.string());
      PlanOptions o;
      o.planner = "exact";
      o.exactBudgetMs = 10000;
      const Plan plan = planMemory(buffers, o);
      QVERIFY2(validatePlan(buffers, plan).empty(), name.c_str());
      const Plan heuristic = planMemory(buffers, "best_of");
      QVERIFY2(plan.arenaBytes <= heuristic.arenaBytes, name.c_str());
      ++total;
      fitted += plan.arenaBytes <= capacity;
      qInfo("%-32s arena %8lld  capacity %8lld  %s  (%s: %s, %.0f ms)", name.c_str(),
            static_cast<long long>(plan.arenaBytes), static_cast<long long>(capacity),
            plan.arenaBytes <= capacity ? "fits" : "DOES NOT FIT", plan.planner.c_str(), plan.detail.c_str(), plan.ms);
    }
    // Whether a trace fits depends on how far the search gets within its time budget, i.e. on the machine: reported,
    // not asserted (the exact search itself is checked against brute force in test_memory_planners).
    qInfo("exact: %d of %d traces fit their capacity within the budget", fitted, total);
  }
};

QTEST_GUILESS_MAIN(MemoryTracesTest)
#include "test_memory_traces.moc"
