// The engine side of `kiln batch`: the gate expression parser and evaluator, the RunMetrics JSON round trip and its
// checks on untrusted input, the stable case list and its shards, and escaping for XML/HTML.
#include <QtTest>

#include <set>

#include "batch/batch_case.h"
#include "batch/batch_summary.h"
#include "batch/gate_expr.h"
#include "batch/text_reports.h"
#include "report/run_metrics.h"
#include "util/xml_escape.h"

using namespace kiln;

namespace {

RunMetrics sample() {
  RunMetrics m;
  m.model = "models/a.onnx";
  m.optionSet = "default";
  m.nodesBefore = 100;
  m.nodesAfter = 40;
  m.compile.fused = {{"ConvBatchNormFusion", 5}, {"LayerNormFusion", 2}};
  m.compile.transdata = 3;
  m.compile.streams = 2;
  m.compile.events = 1;
  m.compile.built = true;
  m.compile.arenaBytes = 2048;
  m.compile.lowerBoundBytes = 1024;
  m.compile.noReuseBytes = 8192;
  m.compile.tasks = 50;
  m.simulated = true;
  m.latencyUs = 100;
  m.utilisation = {{"cube", 0.5}, {"vector", 0.25}};
  m.functional = true;
  m.maxAbsError = 2e-3;
  m.maxRelError = 1e-2;
  m.compileMs = 12.5;
  return m;
}

GateOutcome::State eval(const std::string& expr, const RunMetrics& m, const RunMetrics* base = nullptr) {
  return GateExpr::parse(expr).evaluate(m, base).state;
}

}  // namespace

class BatchEngineTest : public QObject {
  Q_OBJECT
 private slots:
  void gatesCompareMetrics() {
    const RunMetrics m = sample();
    using S = GateOutcome::State;
    QCOMPARE(eval("arena > 1.02*lower_bound", m), S::Failed);  // 2048 > 1044.48
    QCOMPARE(eval("arena > 2*lower_bound", m), S::Passed);      // 2048 > 2048 does not hold
    QCOMPARE(eval("max_error > 1e-3", m), S::Failed);
    QCOMPARE(eval("latency - 50 * 2 != 0", m), S::Passed);     // precedence: 100 - (50*2)
    QCOMPARE(eval("(latency - 50) * 2 == 100", m), S::Failed);
    QCOMPARE(eval("-fusions < -6", m), S::Failed);              // -7 < -6
    QCOMPARE(eval("fused.LayerNormFusion >= 2", m), S::Failed);
    QCOMPARE(eval("fused.Missing == 0", m), S::Failed);          // a rule that never fired counts 0
    QCOMPARE(eval("util.cube < 0.6", m), S::Failed);
    RunMetrics timingOnly = m;
    timingOnly.functional = false;
    const GateOutcome skipped = GateExpr::parse("max_error > 1e-3").evaluate(timingOnly, nullptr);
    QCOMPARE(skipped.state, S::Skipped);
    QVERIFY2(QString::fromStdString(skipped.detail).contains("functional"), skipped.detail.c_str());
  }

  void gatesAgainstBaseline() {
    const RunMetrics base = sample();
    RunMetrics now = sample();
    now.compile.fused.erase("LayerNormFusion");  // the change lost two fusions
    now.latencyUs = 104;
    using S = GateOutcome::State;
    QCOMPARE(eval("fusions < baseline", now, &base), S::Failed);
    QCOMPARE(eval("latency > 1.05*baseline", now, &base), S::Passed);
    QCOMPARE(eval("baseline.latency * 1.03 < latency", now, &base), S::Failed);
    QCOMPARE(eval("fused.LayerNormFusion < baseline", now, &base), S::Failed);
    const GateExpr g = GateExpr::parse("latency > 1.05*baseline");
    QVERIFY(g.usesBaseline());
    QCOMPARE(g.evaluate(now, nullptr).state, S::Skipped);  // no baseline case for this model
    const GateOutcome failed = GateExpr::parse("fusions < baseline").evaluate(now, &base);
    QVERIFY2(QString::fromStdString(failed.detail).contains("5 < 7"), failed.detail.c_str());
  }

  void badGatesAreRefused() {
    for (const char* bad : {"", "latency", "latency >", "latency >> 3", "latncy > 3", "(latency > 3", "3 < 4 < 5",
                            "baseline > 3", "latency > 1e999", "latency > @"}) {
      bool threw = false;
      try {
        GateExpr::parse(bad);
      } catch (const std::invalid_argument& e) {
        threw = QString::fromUtf8(e.what()).contains("--fail-on");
      }
      QVERIFY2(threw, bad);
    }
  }

  void metricsRoundTrip() {
    const RunMetrics m = sample();
    const RunMetrics back = runMetricsFromJson(Json::parse(runMetricsToJson(m).dump()));
    QCOMPARE(back.model, m.model);
    QCOMPARE(back.optionSet, m.optionSet);
    QCOMPARE(back.compile.fused, m.compile.fused);
    QCOMPARE(back.compile.arenaBytes, m.compile.arenaBytes);
    QVERIFY(back.compile.built);
    QCOMPARE(back.latencyUs, m.latencyUs);
    QCOMPARE(back.utilisation, m.utilisation);
    QCOMPARE(back.maxAbsError, m.maxAbsError);
    QCOMPARE(back.fusions(), int64_t{7});
    // An output that could not be compared (infinite error) survives JSON, which has no infinity.
    RunMetrics inf = m;
    inf.maxAbsError = std::numeric_limits<double>::infinity();
    QVERIFY(std::isinf(runMetricsFromJson(Json::parse(runMetricsToJson(inf).dump())).maxAbsError));
  }

  void untrustedMetricsAreChecked() {
    for (const char* bad : {R"([1,2])", R"({"option_set":"x"})", R"({"model":"m","latency_us":"fast"})",
                            R"({"model":"m","arena_bytes":-5})", R"({"model":"m","fused":{"A":1.5}})",
                            R"({"model":"m","fused":[1]})", R"({"model":"m","status":"great"})",
                            R"({"model":"m","utilisation":{"cube":"x"}})", R"({"model":7})"}) {
      bool threw = false;
      try {
        runMetricsFromJson(Json::parse(bad));
      } catch (const std::invalid_argument&) {
        threw = true;
      }
      QVERIFY2(threw, bad);
    }
  }

  void shardsPartitionTheCaseList() {
    std::vector<OptionSet> sets(2);
    sets[0].name = "o1";
    sets[1].name = "default";
    const std::vector<std::string> models = {"m/c.onnx", "m/a.onnx", "m/b.onnx", "m/d.onnx", "m/e.onnx"};
    const std::vector<BatchCase> all = batchCases(models, sets);
    QCOMPARE(all.size(), size_t{10});
    QCOMPARE(all.front().model, std::string("m/a.onnx"));  // sorted, whatever the input order
    QCOMPARE(all.front().options->name, std::string("default"));
    std::set<std::string> ids;
    for (const BatchCase& c : all) QVERIFY(ids.insert(c.id).second);
    for (int n : {1, 2, 3, 7, 12}) {
      std::multiset<std::string> seen;
      for (int i = 1; i <= n; ++i) {
        const std::vector<BatchCase> slice = shardCases(all, i, n);
        QVERIFY(slice.size() >= all.size() / size_t(n) && slice.size() <= all.size() / size_t(n) + 1);
        for (const BatchCase& c : slice) seen.insert(c.id);
      }
      QCOMPARE(seen, std::multiset<std::string>(ids.begin(), ids.end()));
    }
    QCOMPARE(parseShard("2/4"), std::make_pair(2, 4));
    for (const char* bad : {"0/2", "3/2", "1/0", "a/b", "1/2x", "1", "-1/2"}) {
      bool threw = false;
      try {
        parseShard(bad);
      } catch (const std::invalid_argument&) {
        threw = true;
      }
      QVERIFY2(threw, bad);
    }
    QCOMPARE(caseId("m/a.onnx", "default"), caseId("m/a.onnx", "default"));
    QVERIFY(caseId("x/model.onnx", "default") != caseId("y/model.onnx", "default"));
  }

  void textIsEscaped() {
    QCOMPARE(xmlEscape("<a href=\"x\">&'"), std::string("&lt;a href=&quot;x&quot;&gt;&amp;&#39;"));
    BatchSummary s;
    CaseRecord c;
    c.id = "x";
    c.metrics = sample();
    c.metrics.model = "evil<script>&\".onnx";
    c.metrics.status = "failed";
    c.metrics.reason = "pass X: bad ]]> <b>";
    s.cases.push_back(c);
    const std::string junit = junitXml(s);
    QVERIFY(junit.find("<script>") == std::string::npos);
    QVERIFY(junit.find("<b>") == std::string::npos);
    QVERIFY(junit.find("evil&lt;script&gt;&amp;&quot;.onnx") != std::string::npos);
  }
};

QTEST_GUILESS_MAIN(BatchEngineTest)
#include "test_batch_engine.moc"
