// The data behind the memory view and the Gantt chart, on generated models compiled through the whole pipeline:
// every block sits where its producer's `mem.out` says, no two tensors live at the same time share bytes (unless
// one aliases the other), the live curve's peak is the lower bound of the same lifetimes and MemoryAssignment's
// counters; the timeline chart keeps every simulated task, links each wait to its record and reports the
// simulator's own utilisation; history rows with odd values are refused, not drawn; and a recorded run's charts
// come back the same when its model is compiled again.
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <limits>
#include <set>

#include "emulator/timing/soc_profile.h"
#include "emulator/timing/timeline_sim.h"
#include "history/history_db.h"
#include "history/history_emulation.h"
#include "history/history_recorder.h"
#include "io/model_loader.h"
#include "io/onnx/onnx_writer.h"
#include "ir/graph.h"
#include "ir/model.h"
#include "memory/lifetimes.h"
#include "memory/memory_plan.h"
#include "options/options.h"
#include "passes/pass_manager.h"
#include "pipeline/standard_pipeline.h"
#include "report/memory_chart.h"
#include "report/run_charts.h"
#include "report/timeline_chart.h"
#include "samples/sample_models.h"
#include "schedule/task_list.h"

using namespace kiln;

namespace {

struct Compiled {
  std::unique_ptr<Model> model;
  RunSummary summary;
  int64_t counter(const std::string& pass, const std::string& name) const {
    for (const PassRecord& r : summary.passes)
      if (r.name == pass) return r.counters.count(name) ? r.counters.at(name) : -1;
    return -1;
  }
};

Compiled compileSample(const std::string& name, int layers = 0, const std::string& until = {}) {
  SampleOptions so;
  so.layers = layers;
  so.weights = false;
  Compiled c;
  c.model = buildSample(name, so);
  Options o;
  PassManager pm;
  addStandardPasses(pm, o);
  if (!until.empty()) pm.setUntil(until);
  c.summary = pm.run(*c.model, o);
  return c;
}

}  // namespace

class ReportChartsTest : public QObject {
  Q_OBJECT
 private slots:
  void memoryChartFollowsTheRecordedPlan_data() {
    QTest::addColumn<QString>("sample");
    QTest::addColumn<int>("layers");
    QTest::newRow("mobilenetv2") << "mobilenetv2" << 0;
    QTest::newRow("llama 2 layers") << "llama" << 2;
  }
  void memoryChartFollowsTheRecordedPlan() {
    QFETCH(QString, sample);
    QFETCH(int, layers);
    const Compiled c = compileSample(sample.toStdString(), layers);
    QVERIFY2(c.summary.status == RunStatus::Ok, c.summary.error.c_str());
    const Graph& g = *c.model->graph;
    const MemoryChart chart = buildMemoryChart(g);
    QVERIFY(chart.planned);
    QCOMPARE(chart.unplaced, 0);
    QCOMPARE(chart.stepNodes.size(), g.numNodes());

    // One block per arena tensor of the lifetimes, at the offset its producer's annotation gives.
    const memory::Lifetimes life = memory::computeLifetimes(g);
    size_t arenaTensors = 0;
    for (const memory::TensorLifetime& t : life.tensors) arenaTensors += t.kind == memory::TensorKind::Arena;
    QVERIFY(arenaTensors > 10);
    QCOMPARE(chart.blocks.size(), arenaTensors);
    for (const MemoryChartBlock& b : chart.blocks) {
      const Value* v = g.findValue(b.valueId);
      QVERIFY(v && v->producer());
      QCOMPARE(v->producer()->id(), b.producerId);
      const QStringList offsets = QString::fromStdString(v->producer()->annotation("mem.out")).split(',');
      QCOMPARE(offsets.value(qsizetype(v->producerIndex())).toLongLong(), b.offset);
      QVERIFY(b.first < b.end);
      QVERIFY(b.bytes > 0);
    }

    // No two tensors live at the same time share bytes, unless they are one arena block (an alias and its input).
    for (size_t i = 0; i < chart.blocks.size(); ++i)
      for (size_t j = i + 1; j < chart.blocks.size(); ++j) {
        const MemoryChartBlock& a = chart.blocks[i];
        const MemoryChartBlock& b = chart.blocks[j];
        const bool time = a.first < b.end && b.first < a.end;
        const bool space = a.offset < b.offset + b.bytes && b.offset < a.offset + a.bytes;
        if (time && space && a.arenaBlock != b.arenaBlock)
          QFAIL(qPrintable(QString("%1 and %2 overlap").arg(QString::fromStdString(a.name), QString::fromStdString(b.name))));
      }

    // The curve's peak is the lower bound of the same (aligned) lifetimes, and what MemoryAssignment counted.
    QCOMPARE(chart.lowerBound, memory::lowerBound(memory::alignedBlocks(life)));
    QCOMPARE(chart.lowerBound, c.counter("MemoryAssignment", "lower_bound"));
    QCOMPARE(chart.arenaBytes, c.counter("MemoryAssignment", "memory_size"));
    QCOMPARE(*std::max_element(chart.live.begin(), chart.live.end()), chart.lowerBound);
    QCOMPARE(chart.live[size_t(chart.peakStep)], chart.lowerBound);

    // The tensors listed at the peak are exactly those alive there, largest first, and their blocks fill the peak.
    std::set<int> peakArenaBlocks;
    for (size_t k = 0; k < chart.peakBlocks.size(); ++k) {
      const MemoryChartBlock& b = chart.blocks[chart.peakBlocks[k]];
      QVERIFY(b.first <= chart.peakStep && chart.peakStep < b.end);
      if (k > 0) QVERIFY(chart.blocks[chart.peakBlocks[k - 1]].bytes >= b.bytes);
      peakArenaBlocks.insert(b.arenaBlock);
    }
    size_t alive = 0;
    for (const MemoryChartBlock& b : chart.blocks) alive += b.first <= chart.peakStep && chart.peakStep < b.end;
    QCOMPARE(chart.peakBlocks.size(), alive);
    const std::vector<memory::Buffer> aligned = memory::alignedBlocks(life);
    int64_t peakBytes = 0;
    for (int b : peakArenaBlocks) peakBytes += aligned[size_t(b)].size;
    QCOMPARE(peakBytes, chart.lowerBound);

    // Reuse blocks group tensors by offset: the same offset, the same reuse block.
    std::map<int64_t, int> reuse;
    for (const MemoryChartBlock& b : chart.blocks) {
      auto [it, fresh] = reuse.emplace(b.offset, b.reuseBlock);
      QCOMPARE(it->second, b.reuseBlock);
    }
    QCOMPARE(chart.reuseBlocks, int(reuse.size()));
  }

  void noPlanBeforeMemoryAssignment() {
    const Compiled c = compileSample("mobilenetv2", 0, "optimize");
    QVERIFY(c.summary.status == RunStatus::Stopped);
    const MemoryChart chart = buildMemoryChart(*c.model->graph);
    QVERIFY(!chart.planned);
    QVERIFY(chart.blocks.empty());
  }

  void oddAnnotationsAreSkipped() {
    Compiled c = compileSample("mobilenetv2");
    const size_t before = buildMemoryChart(*c.model->graph).blocks.size();
    // A hand-edited graph: offsets that are negative, too large for 64 bits, or not numbers.
    int edited = 0;
    for (Node* n : c.model->graph->nodes()) {
      if (n->annotation("mem.out").empty() || n->annotation("mem.out") == "output" || edited == 3) continue;
      const char* odd[] = {"-512", "99999999999999999999999", "0x40"};
      n->setAnnotation("mem.out", odd[edited++]);
    }
    QCOMPARE(edited, 3);
    const MemoryChart chart = buildMemoryChart(*c.model->graph);
    QVERIFY(chart.unplaced >= 1);
    QVERIFY(chart.blocks.size() < before);
    for (const MemoryChartBlock& b : chart.blocks) QVERIFY(b.offset >= 0);
  }

  void timelineChartKeepsTheSimulation() {
    const Compiled c = compileSample("llama", 2);
    QVERIFY2(c.summary.status == RunStatus::Ok, c.summary.error.c_str());
    const SocProfile soc = SocProfile::load("Ascend910A");
    const std::vector<Task> tasks = buildTaskList(*c.model->graph, soc.aiCores);
    const Timeline tl = simulateTimeline(tasks, soc, true);
    const TimelineChart chart = timelineChartFromSimulation(tl, soc);
    QCOMPARE(chart.tasks.size(), tl.entries.size());
    QCOMPARE(chart.latencyUs, tl.latencyUs);
    size_t critical = 0, waits = 0;
    for (size_t i = 0; i < chart.tasks.size(); ++i) {
      const TimelineChartTask& t = chart.tasks[i];
      QCOMPARE(t.task, tl.entries[i].task);
      if (tl.entries[i].node) {
        QCOMPARE(t.nodeId, tl.entries[i].node->id());
        QVERIFY(!t.opType.empty());
        QVERIFY(t.shapes.find("→") != std::string::npos);
      }
      critical += t.critical;
      waits += t.type == "EVENT_WAIT";
    }
    QCOMPARE(critical, tl.criticalPath.size());
    // Every wait has its record: an arrow each, across streams, from the record to the wait of the same event.
    QCOMPARE(chart.arrows.size(), waits);
    for (const TimelineChartArrow& a : chart.arrows) {
      QCOMPARE(chart.tasks[a.record].type, std::string("EVENT_RECORD"));
      QCOMPARE(chart.tasks[a.wait].type, std::string("EVENT_WAIT"));
      QCOMPARE(chart.tasks[a.record].event, chart.tasks[a.wait].event);
      QVERIFY(chart.tasks[a.wait].endUs >= chart.tasks[a.record].endUs);
    }

    // Lanes per stream: every task once, nothing overlaps within a row, utilisation within [0, 1].
    for (bool byUnit : {false, true}) {
      const std::vector<TimelineChartLane> lanes = timelineLanes(chart, byUnit);
      size_t total = 0;
      for (const TimelineChartLane& lane : lanes) {
        total += lane.tasks.size();
        QCOMPARE(lane.row.size(), lane.tasks.size());
        std::map<int, double> rowEnd;
        for (size_t k = 0; k < lane.tasks.size(); ++k) {
          const TimelineChartTask& t = chart.tasks[lane.tasks[k]];
          if (rowEnd.count(lane.row[k])) QVERIFY(t.startUs >= rowEnd[lane.row[k]]);
          rowEnd[lane.row[k]] = t.endUs;
        }
        QVERIFY(lane.utilisation >= 0 && lane.utilisation <= 1 + 1e-9);
      }
      QCOMPARE(total, chart.tasks.size());
      if (!byUnit) continue;
      // Per unit the lanes report the simulator's own utilisation.
      for (const UnitUtilisation& u : tl.units)
        for (const TimelineChartLane& lane : lanes)
          if (lane.label == simUnitName(u.unit)) QVERIFY(std::abs(lane.utilisation - u.utilisation) < 1e-9);
    }
  }

  void historyRowsWithOddValuesAreDropped() {
    const Compiled c = compileSample("llama", 1);
    const SocProfile soc = SocProfile::load("Ascend910A");
    const Timeline tl = simulateTimeline(buildTaskList(*c.model->graph, soc.aiCores), soc, true);
    std::vector<TimelineRow> rows = timelineRows(tl);
    const TimelineChart clean = timelineChartFromRows(rows, *c.model->graph, soc);
    QCOMPARE(clean.tasks.size(), tl.entries.size());
    QCOMPARE(clean.arrows.size(), timelineChartFromSimulation(tl, soc).arrows.size());
    QCOMPARE(clean.droppedRows, 0);
    for (size_t i = 0; i < clean.tasks.size(); ++i)
      if (tl.entries[i].node) QCOMPARE(clean.tasks[i].opType, tl.entries[i].node->qualifiedType());

    TimelineRow bad = rows.front();
    bad.startUs = std::numeric_limits<double>::quiet_NaN();
    rows.push_back(bad);
    bad = rows.front();
    bad.startUs = 10;
    bad.endUs = 5;
    rows.push_back(bad);
    bad = rows.front();
    bad.stream = -3;
    rows.push_back(bad);
    bad = rows.front();
    bad.endUs = 1e300;
    rows.push_back(bad);
    bad = rows.front();
    bad.task = 99999;
    bad.nodeId = 123456789;  // no such node: drawn without its facts
    bad.event = 424242;      // no record of it: no arrow
    bad.type = "EVENT_WAIT";
    rows.push_back(bad);
    const TimelineChart odd = timelineChartFromRows(rows, *c.model->graph, soc);
    QCOMPARE(odd.droppedRows, 4);
    QCOMPARE(odd.tasks.size(), tl.entries.size() + 1);
    QCOMPARE(odd.arrows.size(), clean.arrows.size());
    QVERIFY(std::isfinite(odd.latencyUs));
    QVERIFY(!timelineLanes(odd, false).empty());
  }

  void recordedRunComesBackTheSame() {
    QTemporaryDir tmp;
    const std::string modelPath = tmp.filePath("llama1.onnx").toStdString();
    SampleOptions so;
    so.layers = 1;
    so.weights = false;
    writeOnnxFile(*buildSample("llama", so), modelPath);
    const std::string dbPath = tmp.filePath("history.db").toStdString();
    auto record = [&](const std::string& until) {
      LoadedModel m = loadModel(modelPath);
      HistoryDb db(dbPath);
      HistoryRecorder recorder(db, modelPath);
      Options o;
      PassManager pm;
      addStandardPasses(pm, o);
      if (!until.empty()) pm.setUntil(until);
      pm.addObserver(&recorder);
      pm.run(*m.model, o);
      return std::make_pair(recorder.runId(), std::shared_ptr<const Model>(std::move(m.model)));
    };
    const auto [run, compiled] = record("");
    const RunCharts inMemory = loadRunCharts(dbPath, run, compiled);
    QVERIFY2(inMemory.memory && inMemory.timeline, inMemory.memoryMessage.c_str());
    QVERIFY(!inMemory.recompiled);
    const RunCharts again = loadRunCharts(dbPath, run, nullptr);
    QVERIFY2(again.memory && again.timeline, again.memoryMessage.c_str());
    QVERIFY(again.recompiled);
    QCOMPARE(again.memory->blocks.size(), inMemory.memory->blocks.size());
    for (size_t i = 0; i < again.memory->blocks.size(); ++i) {
      QCOMPARE(again.memory->blocks[i].valueId, inMemory.memory->blocks[i].valueId);
      QCOMPARE(again.memory->blocks[i].offset, inMemory.memory->blocks[i].offset);
    }
    QCOMPARE(again.timeline->latencyUs, inMemory.timeline->latencyUs);
    QVERIFY(inMemory.timeline->source.find("simulated") != std::string::npos);

    // With the rows `kiln run --history` records, those are what the chart shows.
    {
      const SocProfile soc = SocProfile::load(Options().getString("soc_version"));
      Timeline tl = simulateTimeline(buildTaskList(*compiled->graph, soc.aiCores), soc, true);
      for (TimelineEntry& e : tl.entries) e.endUs += 1;  // recognisably not a fresh simulation
      HistoryDb db(dbPath);
      writeTimeline(db, run, timelineRows(tl));
    }
    const RunCharts recorded = loadRunCharts(dbPath, run, compiled);
    QVERIFY(recorded.timeline);
    QVERIFY2(recorded.timeline->source.find("recorded") != std::string::npos, recorded.timeline->source.c_str());
    QCOMPARE(recorded.timeline->tasks.size(), inMemory.timeline->tasks.size());
    QCOMPARE(recorded.timeline->tasks.back().endUs, inMemory.timeline->tasks.back().endUs + 1);

    // A run stopped before Stage 3 says so in both views.
    const auto [stopped, partial] = record("optimize");
    const RunCharts none = loadRunCharts(dbPath, stopped, partial);
    QVERIFY(!none.memory && !none.timeline);
    QVERIFY2(none.memoryMessage.find("before MemoryAssignment") != std::string::npos, none.memoryMessage.c_str());
    QVERIFY2(none.timelineMessage.find("before TaskGeneration") != std::string::npos, none.timelineMessage.c_str());

    // The model file gone: a message naming it, not a crash.
    QVERIFY(QFile::remove(QString::fromStdString(modelPath)));
    const RunCharts gone = loadRunCharts(dbPath, run, nullptr);
    QVERIFY(!gone.memory);
    QVERIFY2(gone.memoryMessage.find("llama1.onnx") != std::string::npos, gone.memoryMessage.c_str());
  }
};

QTEST_GUILESS_MAIN(ReportChartsTest)
#include "test_report_charts.moc"
