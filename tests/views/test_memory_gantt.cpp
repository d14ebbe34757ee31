// The memory view and the Gantt chart in the workbench, offscreen, as a person uses them: open the bundled sample,
// check the memory view draws one block per tensor the plan placed (counted from the `mem.out` annotations the
// history recorded), click a block and see its producer selected on the canvas, select a node on the canvas and see
// its blocks and tasks marked, click a Gantt task and see its node in the inspector; a run stopped before Stage 3
// shows a sentence, not an empty chart; odd timeline rows in the history and odd chart values do not crash the
// views; a generated two-layer llama draws its streams with event arrows. Screenshots go to tests/artifacts/ in the build tree.
#include <QDir>
#include <QDockWidget>
#include <QFileInfo>
#include <QGraphicsItem>
#include <QGraphicsScene>
#include <QListWidget>
#include <QTableWidget>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>
#include <limits>

#include "gantt_plot.h"
#include "gantt_view.h"
#include "graph_canvas.h"
#include "history/history_db.h"
#include "history/history_emulation.h"
#include "history/history_reader.h"
#include "history/history_recorder.h"
#include "inspector.h"
#include "io/model_loader.h"
#include "io/onnx/onnx_writer.h"
#include "main_window.h"
#include "support/gui_shots.h"
#include "memory_plot.h"
#include "memory_view.h"
#include "options/options.h"
#include "passes/pass_manager.h"
#include "pipeline/standard_pipeline.h"
#include "samples/sample_models.h"
#include "shape_sweep_view.h"
#include "options_form.h"
#include "util/json.h"

using namespace kiln;

namespace {

using kiln::testing::shot;

bool settled(app::MainWindow& w) {
  return !w.busy() && !w.chartsPending() && w.canvas()->passView() && !w.canvas()->scene()->items().isEmpty();
}

QDockWidget* dockOf(QWidget* w) {
  for (QObject* p = w->parent(); p; p = p->parent())
    if (auto* d = qobject_cast<QDockWidget*>(p)) return d;
  return nullptr;
}

// Output slots the plan put into the arena, from the history's annotations: a number in `mem.out`.
size_t plannedTensors(const GraphSnapshot& g) {
  size_t n = 0;
  for (const NodeRow& node : g.nodes) {
    if (node.graphOwner != 0) continue;
    const Json a = Json::parse(node.annotationsJson);
    const Json* mem = a.find("mem.out");
    if (!mem) continue;
    for (const QString& item : QString::fromStdString(mem->asString()).split(',')) {
      bool ok = false;
      item.toLongLong(&ok);
      n += ok;
    }
  }
  return n;
}

}  // namespace

class MemoryGanttTest : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir tmp_;
  std::unique_ptr<app::MainWindow> w_;
  QString db() const { return tmp_.filePath("history.db"); }

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QSettings().clear();
    QVERIFY(tmp_.isValid());
    w_ = std::make_unique<app::MainWindow>();
    w_->setHistoryPath(db());
    w_->resize(1500, 1000);
    w_->show();
    w_->openPath(KILN_SAMPLE);
    QTRY_VERIFY_WITH_TIMEOUT(settled(*w_) && w_->currentRun() > 0, 120000);
  }

  void memoryViewHasOneBlockPerPlannedTensor() {
    views::MemoryView* mv = w_->memoryView();
    QVERIFY2(mv->showsChart(), qPrintable(mv->message()));
    HistoryDb h(db().toStdString(), HistoryDb::Mode::ReadOnly);
    HistoryReader r(h);
    const RunInfo run = r.run(w_->currentRun());
    const GraphSnapshot last = r.graphAt(run.id, run.lastPass);
    QCOMPARE(size_t(mv->blockCount()), plannedTensors(last));
    QVERIFY(mv->blockCount() > 50);
    // The arena and lower bound agree with MemoryAssignment's counters in the history.
    for (const PassInfo& p : r.passes(run.id))
      if (p.name == "MemoryAssignment") {
        QCOMPARE(mv->chart()->arenaBytes, p.counters.at("memory_size"));
        QCOMPARE(mv->chart()->lowerBound, p.counters.at("lower_bound"));
      }
    QCOMPARE(size_t(mv->peakList()->count()), mv->chart()->peakBlocks.size());
    // The run's arena and simulated latency join its outcome in the status bar.
    QVERIFY2(w_->statusText().contains("arena") && w_->statusText().contains("latency"), qPrintable(w_->statusText()));
    QVERIFY(mv->peakList()->count() > 0);
    dockOf(mv)->raise();
    QTRY_VERIFY(mv->plot()->isVisible() && mv->plot()->width() > 300);
    shot(*mv, "mg_01_memory_reuse_blocks");
    mv->setColourBy(1);
    shot(*mv, "mg_02_memory_by_op_type");
    mv->setColourBy(0);
  }

  void clickingABlockSelectsItsProducerOnTheCanvas() {
    views::MemoryView* mv = w_->memoryView();
    dockOf(mv)->raise();
    views::MemoryPlot* plot = mv->plot();
    QTRY_VERIFY(plot->isVisible() && plot->width() > 300);
    // The largest block on screen: its centre is on it, not under a neighbour.
    int chosen = -1;
    double best = 0;
    for (size_t i = 0; i < mv->chart()->blocks.size(); ++i) {
      const auto& b = mv->chart()->blocks[i];
      const double area = double(b.end - b.first) * double(b.bytes);
      if (plot->blockAt(plot->blockCentre(i)) == int(i) && area > best) {
        best = area;
        chosen = int(i);
      }
    }
    QVERIFY(chosen >= 0);
    const qint64 producer = mv->chart()->blocks[size_t(chosen)].producerId;
    QSignalSpy spy(mv, &views::MemoryView::nodeSelected);
    QTest::mouseClick(plot, Qt::LeftButton, {}, plot->blockCentre(size_t(chosen)));
    QCOMPARE(spy.count(), 1);
    QCOMPARE(spy.first().first().toLongLong(), producer);
    QTRY_VERIFY_WITH_TIMEOUT(!w_->busy() && w_->canvas()->selectedNode() == producer, 30000);
    QVERIFY(w_->canvas()->itemForNode(producer)->isSelected());
    QVERIFY(!plot->selectedBlocks().empty());
    // The Gantt chart marks the same node's tasks.
    QCOMPARE(w_->ganttView()->plot()->selectedNode(), producer);
    shot(*w_, "mg_03_block_selected_window");
  }

  void canvasSelectionMarksBlocksAndTasks() {
    // Another node, chosen on the canvas: the views follow.
    const auto& blocks = w_->memoryView()->chart()->blocks;
    const qint64 id = blocks[blocks.size() / 2].producerId;
    QVERIFY(id != w_->canvas()->selectedNode());
    w_->canvas()->revealNode(id);
    QTRY_VERIFY_WITH_TIMEOUT(!w_->busy() && w_->canvas()->selectedNode() == id, 30000);
    QCOMPARE(w_->memoryView()->plot()->selectedNode(), id);
    for (size_t i : w_->memoryView()->plot()->selectedBlocks()) QCOMPARE(blocks[i].producerId, id);
    QVERIFY(!w_->memoryView()->plot()->selectedBlocks().empty());
    QCOMPARE(w_->ganttView()->plot()->selectedNode(), id);
  }

  void clickingATaskShowsItsNodeInTheInspector() {
    views::GanttView* gv = w_->ganttView();
    dockOf(gv)->raise();
    QVERIFY2(gv->showsChart(), qPrintable(gv->message()));
    views::GanttPlot* plot = gv->plot();
    QTRY_VERIFY(plot->isVisible() && plot->width() > 300);
    plot->fit();
    // The longest kernel: wide enough to hit at the fitted zoom.
    int chosen = -1;
    for (size_t i = 0; i < gv->chart()->tasks.size(); ++i) {
      const auto& t = gv->chart()->tasks[i];
      if (t.type != "KERNEL" || t.nodeId == w_->canvas()->selectedNode()) continue;
      if (chosen < 0 || t.endUs - t.startUs > gv->chart()->tasks[size_t(chosen)].endUs - gv->chart()->tasks[size_t(chosen)].startUs)
        chosen = int(i);
    }
    QVERIFY(chosen >= 0);
    const auto& task = gv->chart()->tasks[size_t(chosen)];
    QCOMPARE(plot->taskAt(plot->taskCentre(size_t(chosen))), chosen);
    QTest::mouseClick(plot, Qt::LeftButton, {}, plot->taskCentre(size_t(chosen)));
    QTRY_VERIFY_WITH_TIMEOUT(!w_->busy() && w_->canvas()->selectedNode() == task.nodeId, 30000);
    const QString text = w_->inspector()->text();
    QVERIFY2(text.contains(QString::fromStdString(task.nodeName)), qPrintable(text));
    QVERIFY2(text.contains(QString::fromStdString(task.opType).section(':', -1)), qPrintable(text));
    QCOMPARE(w_->memoryView()->plot()->selectedNode(), task.nodeId);
    shot(*gv, "mg_04_gantt_streams");
    // Zoom in on the selected task with the keyboard, then lanes per unit.
    plot->setFocus();
    for (int i = 0; i < 12; ++i) QTest::keyClick(plot, Qt::Key_Plus);
    QVERIFY(plot->visibleToUs() - plot->visibleFromUs() < gv->chart()->latencyUs / 10);
    plot->selectNode(task.nodeId);  // brings the node's tasks back into view
    bool seen = false;
    for (size_t i : plot->selectedTasks()) {
      const auto& t = gv->chart()->tasks[i];
      seen = seen || (t.endUs >= plot->visibleFromUs() && t.startUs <= plot->visibleToUs());
    }
    QVERIFY(seen);
    shot(*gv, "mg_05_gantt_zoomed");
    // With the chart focused, ←/→ pan it (the window's own ←/→ step passes) and F fits it (not the graph).
    const int pass = w_->canvas()->passView()->toPass;
    const double from = plot->visibleFromUs();
    QTest::keyClick(plot, Qt::Key_Left);
    QTest::keyClick(plot, Qt::Key_Left);
    QTest::keyClick(plot, Qt::Key_Right);
    QVERIFY(plot->visibleFromUs() < from);
    QCOMPARE(w_->canvas()->passView()->toPass, pass);
    QVERIFY(!w_->busy());
    QTest::keyClick(plot, Qt::Key_F);
    QCOMPARE(plot->visibleFromUs(), 0.0);
    QVERIFY(plot->visibleToUs() >= gv->chart()->latencyUs);
    gv->setLanesByUnit(true);
    plot->fit();
    QVERIFY(plot->lanes().size() >= 2);
    shot(*gv, "mg_06_gantt_units");
    gv->setLanesByUnit(false);
  }

  void aRunStoppedBeforeStage3ShowsASentence() {
    {
      LoadedModel m = loadModel(KILN_SAMPLE);
      HistoryDb h(db().toStdString());
      HistoryRecorder recorder(h, QFileInfo(KILN_SAMPLE).absoluteFilePath().toStdString());
      Options o;
      PassManager pm;
      addStandardPasses(pm, o);
      pm.setUntil("optimize");
      pm.addObserver(&recorder);
      pm.run(*m.model, o);
    }
    w_->openPath(db());  // shows the newest run: the stopped one
    QTRY_VERIFY_WITH_TIMEOUT(settled(*w_), 60000);
    QVERIFY(!w_->memoryView()->showsChart());
    QVERIFY2(w_->memoryView()->message().contains("before MemoryAssignment"), qPrintable(w_->memoryView()->message()));
    QVERIFY(!w_->ganttView()->showsChart());
    QVERIFY2(w_->ganttView()->message().contains("before TaskGeneration"), qPrintable(w_->ganttView()->message()));
    dockOf(w_->memoryView())->raise();
    shot(*w_, "mg_07_stopped_run_message");
  }

  void oddTimelineRowsDoNotCrash() {
    // The first run (complete) with a recorded timeline full of odd values next to a sane row.
    HistoryDb h(db().toStdString());
    const int64_t run = HistoryReader(h).listRuns().front().id;
    std::vector<TimelineRow> rows;
    TimelineRow ok;
    ok.task = 0;
    ok.type = "KERNEL";
    ok.unit = "cube";
    ok.endUs = 5;
    rows.push_back(ok);
    for (int i = 1; i <= 6; ++i) {
      TimelineRow r = ok;
      r.task = i;
      if (i == 1) r.startUs = -100;
      if (i == 2) r.endUs = std::numeric_limits<double>::infinity();
      if (i == 3) r.stream = 1 << 30;
      if (i == 4) r.flops = -std::numeric_limits<double>::infinity();  // (SQLite stores NaN as NULL, refused)
      if (i == 5) r.nodeId = -7;  // no such node
      if (i == 6) {
        r.endUs = 3e12;  // a month: kept, the chart just gets long
        r.cores = -4;
        r.event = 99;
        r.type = "EVENT_WAIT";
      }
      rows.push_back(r);
    }
    writeTimeline(h, run, rows);
    for (int i = 0; i < w_->runList()->count(); ++i)
      if (w_->runList()->item(i)->data(Qt::UserRole + 1).toLongLong() == run) {
        w_->runList()->setCurrentRow(i);
        emit w_->runList()->itemClicked(w_->runList()->item(i));
      }
    QTRY_VERIFY_WITH_TIMEOUT(settled(*w_) && w_->currentRun() == run && w_->ganttView()->showsChart(), 120000);
    QCOMPARE(w_->ganttView()->chart()->droppedRows, 4);
    QCOMPARE(w_->ganttView()->taskCount(), 3);
    views::GanttPlot* plot = w_->ganttView()->plot();
    dockOf(w_->ganttView())->raise();
    for (int i = 0; i < 40; ++i) QTest::keyClick(plot, Qt::Key_Plus);
    for (int i = 0; i < 5; ++i) QTest::keyClick(plot, Qt::Key_Right);
    QTest::mouseMove(plot, QPoint(plot->width() / 2, 40));
    QVERIFY(!plot->grab().isNull());
    w_->ganttView()->setLanesByUnit(true);
    QVERIFY(!plot->grab().isNull());
    w_->ganttView()->setLanesByUnit(false);
  }

  void oddMemoryChartValuesDoNotCrash() {
    // A chart as a damaged source could give it: negative and enormous offsets and sizes, reversed lifetimes.
    auto chart = std::make_shared<MemoryChart>();
    chart->planned = true;
    chart->stepNodes = {1, 2, 3};
    const int64_t huge = std::numeric_limits<int64_t>::max() / 2;
    chart->blocks = {{1, "a", 1, "Conv", 0, 0, 2, 0, 1024, 0, 0},
                     {2, "b", 2, "Relu", -1, 1, 3, -4096, 512, 1, 1},
                     {3, "c", 3, "Add", 7, 2, 1, huge, huge, 2, 2},
                     {4, "d", 3, "Add", 7, -50, 1'000'000'000'000, 0, -1, 3, 3}};
    chart->arenaBytes = huge;
    chart->lowerBound = -5;
    chart->live = {1024, -3, huge};
    chart->peakStep = 2;
    chart->peakBlocks = {2, 0};
    chart->reuseBlocks = 4;
    views::MemoryView view;
    view.resize(900, 500);
    view.show();
    view.setChart(chart);
    QVERIFY(view.showsChart());
    views::MemoryPlot* plot = view.plot();
    QVERIFY(!view.grab().isNull());
    for (int i = 0; i < 30; ++i) QTest::keyClick(plot, Qt::Key_Plus);
    for (int i = 0; i < 30; ++i) QTest::keyClick(plot, Qt::Key_Up);
    QTest::mouseClick(plot, Qt::LeftButton, {}, QPoint(plot->width() / 2, plot->height() / 3));
    view.selectNode(3);
    QVERIFY(!view.grab().isNull());
    view.setChart(nullptr);
    QVERIFY(!view.showsChart());
  }

  void multiStreamModelDrawsEventArrows() {
    // A generated llama (two layers, weights as shaped inputs): attention branches run on several streams.
    const QString path = tmp_.filePath("llama2.onnx");
    SampleOptions so;
    so.layers = 2;
    so.weights = false;
    writeOnnxFile(*buildSample("llama", so), path.toStdString());
    w_->openPath(path);
    QTRY_VERIFY_WITH_TIMEOUT(settled(*w_) && w_->windowTitle().contains("llama2"), 120000);
    views::GanttView* gv = w_->ganttView();
    QVERIFY2(gv->showsChart(), qPrintable(gv->message()));
    QVERIFY(gv->plot()->lanes().size() >= 2);
    QVERIFY(!gv->chart()->arrows.empty());
    dockOf(gv)->raise();
    QTRY_VERIFY(gv->plot()->isVisible() && gv->plot()->width() > 300);
    shot(*gv, "mg_08_llama_gantt_streams");
    gv->plot()->zoomTime(6);
    shot(*gv, "mg_09_llama_gantt_zoomed");
    gv->plot()->fit();
    views::MemoryView* mv = w_->memoryView();
    QVERIFY2(mv->showsChart(), qPrintable(mv->message()));
    dockOf(mv)->raise();
    QTRY_VERIFY(mv->plot()->isVisible() && mv->plot()->width() > 300);
    mv->setColourBy(2);
    shot(*mv, "mg_10_llama_memory_by_stream");
    mv->setColourBy(0);
    shot(*w_, "mg_11_llama_window");
  }

  void bertBaseIsPlannedAtItsBoundShapes() {
    // bert-base over batch×sequence: bound by the dim policy (batch 1, sequence 128), every tensor is planned, and
    // the status bar and the Options dock say at which shapes.
    const QString path = tmp_.filePath("bert.onnx");
    SampleOptions so;
    so.weights = false;
    so.layers = 2;
    writeOnnxFile(*buildSample("bert-base", so), path.toStdString());
    w_->openPath(path);
    QTRY_VERIFY_WITH_TIMEOUT(settled(*w_) && w_->windowTitle().contains("bert") && !w_->chartsPending(), 120000);
    views::MemoryView* mv = w_->memoryView();
    QVERIFY2(mv->showsChart(), qPrintable(mv->message()));
    QCOMPARE(mv->chart()->unsized, 0);
    QVERIFY(mv->chart()->arenaBytes > 0);
    QTRY_VERIFY2(w_->statusText().contains("shapes batch=1, sequence=128"), qPrintable(w_->statusText()));
    QVERIFY2(w_->optionsForm()->shapeBinding().contains("sequence=128 (dim_policy: sequence)"),
             qPrintable(w_->optionsForm()->shapeBinding()));
    dockOf(mv)->raise();
    QTRY_VERIFY(mv->plot()->isVisible() && mv->plot()->width() > 300);
    shot(*mv, "mg_12_bert_memory");
    views::GanttView* gv = w_->ganttView();
    QVERIFY2(gv->showsChart(), qPrintable(gv->message()));
    dockOf(gv)->raise();
    QTRY_VERIFY(gv->plot()->isVisible() && gv->plot()->width() > 300);
    shot(*gv, "mg_13_bert_gantt");
    shot(*w_, "mg_14_bert_window");

    // The Shapes tab: arena and latency against the sequence, compiled off the UI thread.
    views::ShapeSweepView* sv = w_->shapeSweepView();
    dockOf(sv)->raise();
    sv->setSymbol("sequence");
    sv->setValues("64,128,256");
    QVERIFY(sv->startSweep());
    QTRY_VERIFY_WITH_TIMEOUT(!sv->running(), 120000);
    QVERIFY2(sv->chart() && sv->chart()->points.size() == 3, qPrintable(sv->status()));
    for (const SweepPoint& p : sv->chart()->points) QVERIFY2(p.ok, p.error.c_str());
    QVERIFY(sv->chart()->points[0].arenaBytes < sv->chart()->points[2].arenaBytes);
    QVERIFY(sv->chart()->points[0].latencyUs < sv->chart()->points[2].latencyUs);
    QCOMPARE(sv->table()->rowCount(), 3);
    shot(*sv, "mg_15_bert_shapes_sweep");
    sv->setSymbol("no_such_symbol");
    QVERIFY(sv->startSweep());  // refused by the engine on the worker: the reason is shown, nothing else changes
    QTRY_VERIFY_WITH_TIMEOUT(!sv->running(), 60000);
    QVERIFY2(sv->status().contains("no symbol or role 'no_such_symbol'"), qPrintable(sv->status()));

    // dim_values=keep: symbols left open are out of the plan, and the memory view says which and what sizes them.
    Options keep = w_->optionsForm()->options();
    keep.set("dim_values=keep");
    w_->optionsForm()->setOptions(keep);
    w_->rerun();
    QTRY_VERIFY_WITH_TIMEOUT(settled(*w_) && !w_->chartsPending() && mv->chart() && mv->chart()->unsized > 0, 120000);
    QVERIFY2(mv->summary().contains("batch") && mv->summary().contains("dim_values"), qPrintable(mv->summary()));
  }

  void cleanupTestCase() { w_.reset(); }
};

QTEST_MAIN(MemoryGanttTest)
#include "test_memory_gantt.moc"
