// The memory planners on small instances: known optima, random instances validated for every planner, exact
// against brute force, the validator's own failures, malformed input, and the trace reader's errors.
#include <QtTest>

#include <fstream>

#include "memory/exact_search.h"
#include "memory/memory_plan.h"
#include "memory/trace_csv.h"
#include "memory_test_support.h"

using namespace kiln::memory;
using kiln::memory::test::bruteForceOptimum;
using kiln::memory::test::randomBuffers;

namespace {

const std::vector<std::string> kPlanners = {"none", "greedy_size", "best_of", "exact", ""};

// A short exact budget by default: most instances check validity, not how far the search gets. Tiny ones whose
// optimum is checked get a long one (they finish in microseconds; the budget only guards a loaded machine).
Plan planChecked(const std::vector<Buffer>& b, const std::string& planner, int64_t alignment = 1,
                 double exactBudgetMs = 100) {
  PlanOptions o;
  o.planner = planner;
  o.alignment = alignment;
  o.exactBudgetMs = exactBudgetMs;
  Plan p = planMemory(b, o);
  const std::string problem = validatePlan(b, p);
  if (!problem.empty()) qFatal("%s: %s", planner.c_str(), problem.c_str());
  return p;
}

// The message of the TraceError the text raises ("" when it parses).
QString traceError(const std::string& text) {
  try {
    parseTraceCsv(text, "t.csv");
  } catch (const TraceError& e) {
    return QString::fromStdString(e.describe());
  }
  return {};
}

}  // namespace

class MemoryPlannersTest : public QObject {
  Q_OBJECT
 private slots:
  void lowerBoundCountsTouchingIntervalsOnce() {
    // [0,2) and [2,4) never live together: the peak is the larger one, not the sum.
    QCOMPARE(lowerBound({{0, 0, 2, 10}, {1, 2, 4, 7}}), int64_t(10));
    QCOMPARE(lowerBound({{0, 0, 3, 10}, {1, 2, 4, 7}, {2, 3, 5, 1}}), int64_t(17));
    QCOMPARE(lowerBound({}), int64_t(0));
  }

  void handMadeOptima() {
    // Two phases of two buffers each under one long-lived buffer: optimum = lower bound = 6.
    const std::vector<Buffer> phases = {{0, 0, 4, 2}, {1, 0, 2, 3}, {2, 0, 2, 1}, {3, 2, 4, 4}};
    for (const std::string& p : kPlanners) {
      const Plan plan = planChecked(phases, p);
      QCOMPARE(plan.lowerBound, int64_t(6));
      if (p == "none")
        QCOMPARE(plan.arenaBytes, int64_t(10));
      else
        QVERIFY2(plan.arenaBytes >= 6, p.c_str());
    }
    QCOMPARE(planChecked(phases, "exact", 1, 60000).arenaBytes, int64_t(6));
    // Alignment: offsets round up, sizes do not (3 + pad 1 + 3 = 7 at alignment 4).
    const std::vector<Buffer> two = {{0, 0, 2, 3}, {1, 1, 3, 3}};
    const Plan aligned = planChecked(two, "exact", 4, 60000);
    QCOMPARE(aligned.arenaBytes, int64_t(7));
    QCOMPARE(planChecked(two, "none", 4).offset[1], int64_t(4));
    // Staggered lifetimes of mixed sizes: exact reaches the brute-force optimum (here the lower bound, 5).
    const std::vector<Buffer> stagger = {{0, 0, 2, 2}, {1, 1, 3, 2}, {2, 2, 4, 2}, {3, 0, 1, 1}, {4, 3, 4, 1}, {5, 1, 2, 1}};
    const Plan s = planChecked(stagger, "exact", 1, 60000);
    QCOMPARE(s.arenaBytes, bruteForceOptimum(stagger, 1));
    QCOMPARE(s.arenaBytes, int64_t(5));
    QVERIFY2(s.detail.find("optimal") != std::string::npos, s.detail.c_str());
  }

  void randomInstancesAreValidForEveryPlanner() {
    for (uint32_t seed = 1; seed <= 24; ++seed) {
      const auto b = randomBuffers(seed, 5 + seed * 7, 50, 1000);
      const int64_t alignment = seed % 3 == 0 ? 64 : 1;
      int64_t none = 0;
      for (const Buffer& x : b) none = (none + alignment - 1) / alignment * alignment + x.size;
      for (const std::string& p : kPlanners) {
        const Plan plan = planChecked(b, p, alignment);
        QVERIFY(plan.arenaBytes >= plan.lowerBound);
        QVERIFY(plan.arenaBytes <= none);
        if (p == "none") QCOMPARE(plan.arenaBytes, none);
      }
      // best_of includes greedy_size's order, so it is never worse.
      QVERIFY(planChecked(b, "best_of", alignment).arenaBytes <= planChecked(b, "greedy_size", alignment).arenaBytes);
    }
  }

  // best_of wanted only at the lower bound: the very plan best_of gives whenever that reaches the bound, nothing
  // when it does not (each ordering gave up past the bound); both cases occur among these instances.
  void bestOfAtBoundAgreesWithBestOf() {
    int reached = 0, missed = 0;
    for (uint32_t seed = 1; seed <= 200; ++seed) {
      const auto b = randomBuffers(seed, 4 + seed % 30, 20, 64);
      const int64_t alignment = seed % 3 == 0 ? 8 : 1;
      const Plan full = planChecked(b, "best_of", alignment);
      const std::optional<Plan> atBound = planBestOfAtBound(b, alignment);
      if (full.arenaBytes <= full.lowerBound) {
        ++reached;
        QVERIFY2(atBound, qPrintable(QString("seed %1").arg(seed)));
        QCOMPARE(atBound->offset, full.offset);
        QCOMPARE(atBound->arenaBytes, full.arenaBytes);
        QCOMPARE(atBound->detail, full.detail);
        QVERIFY(validatePlan(b, *atBound).empty());
      } else {
        ++missed;
        QVERIFY2(!atBound, qPrintable(QString("seed %1").arg(seed)));
      }
    }
    QVERIFY(reached > 0 && missed > 0);
  }

  void exactMatchesBruteForce() {
    for (uint32_t seed = 100; seed < 400; ++seed) {
      const auto b = randomBuffers(seed, 3 + seed % 4, 6, 9);
      const int64_t alignment = seed % 4 == 0 ? 4 : 1;
      const Plan plan = planChecked(b, "exact", alignment, 60000);
      QVERIFY2(plan.arenaBytes == bruteForceOptimum(b, alignment),
               qPrintable(QString("seed %1: exact %2").arg(seed).arg(plan.arenaBytes)));
    }
  }

  // Each pruning rule of the exact search, on small instances where it fires: the decision "fits in C?" must match
  // brute force at every capacity from the lower bound to the optimum, under every strategy (preorder x twin rule),
  // with no node limit. Instances with few distinct times and sizes make twins, gaps and splits common.
  void exactRulesPruneAndKeepOptimality() {
    using namespace kiln::memory::detail;
    ExactSearch::Stats fired;
    uint64_t decisions = 0;
    const auto never = std::chrono::steady_clock::now() + std::chrono::hours(1);
    for (uint32_t seed = 1; seed <= 60; ++seed) {
      const auto b = randomBuffers(seed, 4 + seed % 4, 4 + seed % 3, 4);
      const int64_t alignment = seed % 5 == 0 ? 2 : 1;
      const int64_t optimum = bruteForceOptimum(b, alignment);
      ExactInstance instance;
      QVERIFY(buildExactInstance(b, 1000, instance));
      for (size_t strategy = 0; strategy < 6; ++strategy) {
        ExactSearch search(b, alignment, instance);
        QCOMPARE(search.strategies(), size_t(6));
        // Top down, so the remembered failures are reused while the capacity shrinks.
        for (int64_t capacity = optimum; capacity >= lowerBound(b); --capacity) {
          std::vector<int64_t> offsets;
          const Outcome r = search.solve(capacity, strategy, UINT64_MAX, never, offsets);
          ++decisions;
          const QString what = QString("seed %1 strategy %2 capacity %3 (optimum %4)").arg(seed).arg(strategy).arg(capacity).arg(optimum);
          QVERIFY2(r == (capacity >= optimum ? Outcome::Found : Outcome::Infeasible), qPrintable(what));
          if (r == Outcome::Found) {
            Plan p;
            p.offset = offsets;
            p.alignment = alignment;
            for (size_t i = 0; i < b.size(); ++i) p.arenaBytes = std::max(p.arenaBytes, offsets[i] + b[i].size);
            QVERIFY2(validatePlan(b, p).empty(), qPrintable(what));
            QVERIFY2(p.arenaBytes <= capacity, qPrintable(what));
          }
        }
        fired.gap += search.stats().gap;
        fired.sections += search.stats().sections;
        fired.twins += search.stats().twins;
        fired.memo += search.stats().memo;
        fired.splits += search.stats().splits;
      }
    }
    qInfo("%llu decisions; gap %llu, sections %llu, twins %llu, memo %llu, splits %llu", (unsigned long long)decisions,
          (unsigned long long)fired.gap, (unsigned long long)fired.sections, (unsigned long long)fired.twins,
          (unsigned long long)fired.memo, (unsigned long long)fired.splits);
    QVERIFY(fired.gap > 0);
    QVERIFY(fired.sections > 0);
    QVERIFY(fired.twins > 0);
    QVERIFY(fired.memo > 0);
    QVERIFY(fired.splits > 0);
  }

  // Hand-made: two twins (same lifetime) of sizes 1 and 2 under a buffer spanning both phases; the twin rule forbids
  // the small one under the large one, and the optimum (the lower bound, 5) is still found by every strategy.
  void exactTwinRuleKeepsTheOptimum() {
    using namespace kiln::memory::detail;
    const std::vector<Buffer> b = {{0, 0, 2, 1}, {1, 0, 2, 2}, {2, 0, 4, 2}, {3, 2, 4, 3}};
    ExactInstance instance;
    QVERIFY(buildExactInstance(b, 100, instance));
    QCOMPARE(instance.twins[0], std::vector<int32_t>{1});
    const auto never = std::chrono::steady_clock::now() + std::chrono::hours(1);
    for (size_t strategy = 0; strategy < 6; ++strategy) {
      ExactSearch search(b, 1, instance);
      std::vector<int64_t> offsets;
      QVERIFY(search.solve(5, strategy, UINT64_MAX, never, offsets) == Outcome::Found);
      QVERIFY(search.solve(4, strategy, UINT64_MAX, never, offsets) == Outcome::Infeasible);
    }
    QCOMPARE(planChecked(b, "exact", 1, 60000).arenaBytes, int64_t(5));
  }

  void exactFallsBackWhenOutOfTime() {
    const auto b = randomBuffers(7, 300, 200, 100000);
    PlanOptions o;
    o.planner = "exact";
    o.exactBudgetMs = 0;
    const Plan p = planMemory(b, o);
    QCOMPARE(validatePlan(b, p), std::string());
    if (p.arenaBytes > p.lowerBound) {
      QCOMPARE(p.planner, std::string("best_of"));
      QVERIFY2(p.detail.find("budget") != std::string::npos, p.detail.c_str());
    }
  }

  void exactSaysWhenAnInstanceIsTooLarge() {
    // Short staggered lifetimes of mixed sizes: cheap for best_of, yet above the lower bound.
    std::vector<Buffer> b;
    std::mt19937 rng(11);
    for (int64_t i = 0; i < 5001; ++i) {
      const int64_t lower = int64_t(rng() % 5000);
      b.push_back({i, lower, lower + 1 + int64_t(rng() % 20), 1 + int64_t(rng() % 1000)});
    }
    const Plan p = planMemory(b, "exact");
    QCOMPARE(validatePlan(b, p), std::string());
    QVERIFY(p.arenaBytes > p.lowerBound);  // otherwise there would be nothing to search
    QVERIFY2(p.detail.find("too large") != std::string::npos, p.detail.c_str());
  }

  void validatorCatchesBadPlans() {
    const std::vector<Buffer> b = {{0, 0, 4, 10}, {1, 2, 6, 10}, {2, 6, 8, 5}};
    Plan good = planChecked(b, "exact", 2);
    QCOMPARE(validatePlan(b, good), std::string());
    auto broken = [&](auto edit) {
      Plan p = good;
      edit(p);
      return QString::fromStdString(validatePlan(b, p));
    };
    QVERIFY(broken([&](Plan& p) {
              p.offset[1] = p.offset[0];
              p.arenaBytes = std::max(p.offset[0] + 10, p.offset[2] + 5);
            }).contains("overlaps"));
    QVERIFY(broken([](Plan& p) { p.offset[2] = 1; }).contains("multiple of 2"));
    QVERIFY(broken([](Plan& p) { p.offset[2] = -2; }).contains("negative"));
    QVERIFY(broken([](Plan& p) { p.arenaBytes += 2; }).contains("arenaBytes"));
    QVERIFY(broken([](Plan& p) { p.offset.pop_back(); }).contains("offsets for"));
    // Buffers that only touch in time may share memory.
    Plan touching = good;
    touching.offset = {0, 10, 0};
    touching.arenaBytes = 20;
    QCOMPARE(validatePlan(b, touching), std::string());
  }

  void malformedInputIsRejected() {
    auto message = [](const std::vector<Buffer>& b, const std::string& planner, int64_t alignment = 1) {
      try {
        planMemory(b, planner, alignment);
      } catch (const std::invalid_argument& e) {
        return QString(e.what());
      }
      return QString();
    };
    QVERIFY(message({{7, 3, 3, 1}}, "best_of").contains("buffer 7"));
    QVERIFY(message({{7, 3, 2, 1}}, "").contains("not after lower"));
    QVERIFY(message({{7, 0, 2, 0}}, "none").contains("size 0"));
    QVERIFY(message({{7, 0, 2, -5}}, "exact").contains("not positive"));
    QVERIFY(message({{7, 0, 2, 1}}, "fastest").contains("unknown planner 'fastest'"));
    QVERIFY(message({{7, 0, 2, 1}}, "none", 0).contains("alignment"));
    QVERIFY(message({{1, 0, 2, INT64_MAX / 2}, {2, 0, 2, INT64_MAX / 2}}, "none").contains("total size"));
  }

  void traceReaderAcceptsTheFormat() {
    const auto b = parseTraceCsv("id,lower,upper,size\r\n0,0,2,10\n\n1, 1 ,3,+20\n", "t.csv");
    QCOMPARE(b.size(), size_t(2));
    QCOMPARE(b[1].lower, int64_t(1));
    QCOMPARE(b[1].size, int64_t(20));
    QCOMPARE(parseTraceCsv("5,0,1,1", "t.csv").size(), size_t(1));  // no header, no final newline
  }

  void traceReaderErrorsNameFileLineAndProblem() {
    const std::string h = "id,lower,upper,size\n";
    QCOMPARE(traceError(h + "0,0,2,10\n1,0,2\n"), QString("t.csv: line 3: 3 field(s), expected 4 (id,lower,upper,size)"));
    QVERIFY(traceError(h + "0,0,2,-10\n").contains("line 2: size -10 is outside"));
    QVERIFY(traceError(h + "0,5,5,10\n").contains("line 2: upper 5 is not after lower 5"));
    QVERIFY(traceError(h + "0,9,5,10\n").contains("not after lower"));
    QVERIFY(traceError(h + "0,0,2,99999999999999999999999\n").contains("does not fit in 64 bits"));
    QVERIFY(traceError(h + "0,0,2,4611686018427387904\n").contains("size 4611686018427387904 is outside"));
    QVERIFY(traceError(h + "0,0,x2,10\n").contains("upper 'x2' is not an integer"));
    QVERIFY(traceError(h + "0,0,2,1e3\n").contains("size '1e3' is not an integer"));
    QVERIFY(traceError(h + "0,0,2,10,7\n").contains("more than 4 fields"));
    QVERIFY(traceError(h + "0,0,2,\n").contains("empty size"));
    QVERIFY(traceError("a,b,c,d\n").contains("line 1: the header must be id,lower,upper,size"));
    QVERIFY(traceError(h + "0,0,2," + std::string(5000, '1') + "\n").contains("line 2: line longer than"));
    QVERIFY(traceError(h + "0,0,2,10\n" + std::string("0,0,2,1\0x\n", 10)).contains("line 3: size"));
    TraceLimits few;
    few.maxBuffers = 2;
    QVERIFY_THROWS_EXCEPTION(TraceError, parseTraceCsv("0,0,1,1\n1,0,1,1\n2,0,1,1\n", "t.csv", few));
    try {
      readTraceCsv("/nonexistent/trace.csv");
      QFAIL("no error");
    } catch (const TraceError& e) {
      QVERIFY(QString::fromStdString(e.describe()).startsWith("/nonexistent/trace.csv: "));
    }
  }

  void traceReaderStreamsFiles() {
    const QString dir = QStringLiteral(KILN_TEST_TMP);
    QDir().mkpath(dir);
    const std::string path = (dir + "/memory_trace.csv").toStdString();
    {
      std::ofstream out(path);
      out << "id,lower,upper,size\n";
      for (int i = 0; i < 50000; ++i) out << i << "," << i % 100 << "," << i % 100 + 5 << "," << 1 + i % 7 << "\n";
    }
    const auto b = readTraceCsv(path);
    QCOMPARE(b.size(), size_t(50000));
    QCOMPARE(b[49999].size, int64_t(1 + 49999 % 7));
    {
      std::ofstream out(path, std::ios::app);
      out << "50000,1,2,3,4\n";
    }
    try {
      readTraceCsv(path);
      QFAIL("no error");
    } catch (const TraceError& e) {
      QCOMPARE(e.line(), size_t(50002));
    }
  }
};

QTEST_GUILESS_MAIN(MemoryPlannersTest)
#include "test_memory_planners.moc"
