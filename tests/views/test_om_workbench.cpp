// The workbench opens an Ascend .om like any model: the shared ATC-built model compiles into the history and its graph
// is drawn; a corrupt .om is refused with a message naming the file (never a crash or a hang).
#include <QDir>
#include <QDockWidget>
#include <QFileInfo>
#include <QProcess>
#include <QGraphicsScene>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTableWidget>
#include <QtTest>

#include <fstream>
#include <set>

#include "gantt_plot.h"
#include "gantt_view.h"
#include "graph_canvas.h"
#include "io/model_loader.h"
#include "inspector.h"
#include "ir/graph.h"
#include "ir/model.h"
#include "memory_view.h"
#include "report/memory_chart.h"
#include "report/measured_timeline.h"
#include "report/timeline_chart.h"
#include "main_window.h"

using namespace kiln;

namespace {
bool settled(app::MainWindow& w) { return !w.busy() && w.canvas()->passView() && !w.canvas()->scene()->items().isEmpty(); }
void raiseDockOf(QWidget* w) {
  for (QObject* p = w->parent(); p; p = p->parent())
    if (auto* d = qobject_cast<QDockWidget*>(p)) return d->raise();
}
}  // namespace

class OmWorkbenchTest : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir tmp_;

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QSettings().clear();
  }

  void opensTheSharedOm() {
    const QString model = QString(KILN_SHARED_DIR) + "/models/om/a3c_pong_model.om";
    if (!QFileInfo(model).isFile()) QSKIP(qPrintable("shared .om model not found at " + model));
    app::MainWindow w;
    w.setHistoryPath(tmp_.filePath("om.db"));
    w.resize(1200, 800);
    w.show();
    QSignalSpy errors(&w, &app::MainWindow::errorShown);
    w.openPath(model);
    QTRY_VERIFY2_WITH_TIMEOUT(settled(w) || (!errors.isEmpty() && !w.busy()), "open did not finish", 120000);
    QVERIFY2(errors.isEmpty(), errors.isEmpty() ? "" : qPrintable(errors.first().first().toString()));
    QVERIFY(w.currentRun() > 0);
    QDir().mkpath(QString(KILN_ARTIFACTS));
    w.grab().save(QString(KILN_ARTIFACTS) + "/om_workbench.png");
  }

  // An .om is shown as the compiled run it is: the memory view draws the file's own offsets and the timeline its
  // streams' tasks (Kiln's passes do not run over it). Our own .om of the resnet sample: several streams and events.
  void anOmFeedsTheMemoryAndTimelineViews() {
    const QString onnx = tmp_.filePath("resnet.onnx"), om = tmp_.filePath("resnet.om");
    QCOMPARE(QProcess::execute(KILN_BINARY, {"sample", "resnet50", "--layers", "4", "-o", onnx}), 0);
    // Built for another SoC than the workbench's options name: the timeline is simulated on the file's.
    QCOMPARE(QProcess::execute(KILN_BINARY, {"compile", onnx, "--set", "soc_version=Ascend310", "-o", om}), 0);
    const LoadedModel lm = loadModel(om.toStdString());
    const MemoryChart expected = buildMemoryChart(*lm.model->graph);
    QVERIFY(expected.planned && !expected.blocks.empty());
    app::MainWindow w;
    w.setHistoryPath(tmp_.filePath("resnet_om.db"));
    w.resize(1400, 900);
    w.show();
    QSignalSpy errors(&w, &app::MainWindow::errorShown);
    w.openPath(om);
    QTRY_VERIFY2_WITH_TIMEOUT(settled(w) && !w.chartsPending() && w.memoryView()->chart() && w.ganttView()->chart(),
                              qPrintable(QString("settled %1 charts pending %2 memory %3 timeline %4 status '%5'")
                                             .arg(settled(w))
                                             .arg(w.chartsPending())
                                             .arg(bool(w.memoryView()->chart()))
                                             .arg(bool(w.ganttView()->chart()))
                                             .arg(w.statusText())),
                              40000);
    QVERIFY2(errors.isEmpty(), errors.isEmpty() ? "" : qPrintable(errors.first().first().toString()));
    const MemoryChart& shown = *w.memoryView()->chart();
    QCOMPARE(shown.arenaBytes, expected.arenaBytes);
    QCOMPARE(shown.blocks.size(), expected.blocks.size());
    for (size_t i = 0; i < shown.blocks.size(); ++i) QCOMPARE(shown.blocks[i].offset, expected.blocks[i].offset);
    const TimelineChart& timeline = *w.ganttView()->chart();
    std::set<int> streams;
    for (const TimelineChartTask& t : timeline.tasks) streams.insert(t.stream);
    qInfo(".om in the workbench: %zu blocks, arena %lld; %zu tasks on %zu streams, %zu event arrows",
          shown.blocks.size(), static_cast<long long>(shown.arenaBytes), timeline.tasks.size(), streams.size(),
          timeline.arrows.size());
    QVERIFY(timeline.tasks.size() > 20);
    QVERIFY(streams.size() > 1);
    QVERIFY(!timeline.arrows.empty());
    QVERIFY2(QString::fromStdString(timeline.source).contains("Ascend310", Qt::CaseInsensitive),
             timeline.source.c_str());
    QVERIFY2(w.statusText().contains(": ok"), qPrintable(w.statusText()));
    QDir().mkpath(QString(KILN_ARTIFACTS));
    w.grab().save(QString(KILN_ARTIFACTS) + "/om_plan_views.png");
  }

  // GE's own files as a user meets them: a Build-stage dump opens like a model and its plan is what the memory view
  // draws; its ops say what GE recorded (the framework ops a fused op absorbed, the kernel); a folder of dumps opened
  // (or dropped) imports as runs whose PartitionedCall bodies are drawn as groups.
  void geDumpsOpenLikeModels() {
    const QString dumps = QString(KILN_SHARED_DIR) + "/models/ascend/ge_dumps";
    if (!QFileInfo(dumps).isDir()) QSKIP(qPrintable("shared GE dumps not found at " + dumps));
    const QString resnet = dumps + "/oam_tools_compile/ge_proto_00000062_Build.txt";
    app::MainWindow w;
    w.setHistoryPath(tmp_.filePath("ge.db"));
    w.resize(1400, 900);
    w.show();
    QSignalSpy errors(&w, &app::MainWindow::errorShown);
    w.openPath(resnet);
    QTRY_VERIFY2_WITH_TIMEOUT(settled(w) && !w.chartsPending() && w.memoryView()->chart(), "the dump did not open", 60000);
    QVERIFY2(errors.isEmpty(), errors.isEmpty() ? "" : qPrintable(errors.first().first().toString()));
    const LoadedModel lm = loadModel(resnet.toStdString());
    QCOMPARE(w.memoryView()->chart()->arenaBytes, buildMemoryChart(*lm.model->graph).arenaBytes);
    int64_t conv = 0;
    for (const Node* n : lm.model->graph->nodes())
      if (n->name() == "conv1conv1_relu") conv = n->id();
    QVERIFY(conv > 0);
    w.inspector()->showNode(*w.canvas()->passView(), conv);
    const QString facts = w.inspector()->text();
    QVERIFY2(facts.contains("absorbed framework ops\tconv1, bn_conv1, scale_conv1, conv1_relu"), qPrintable(facts));
    QVERIFY2(facts.contains("fused by GE pass\tTbeCommonRules0FusionPass"), qPrintable(facts));
    QVERIFY2(facts.contains("te_fused_op_conv2d_leaky_relu"), qPrintable(facts));
    QDir().mkpath(QString(KILN_ARTIFACTS));
    w.grab().save(QString(KILN_ARTIFACTS) + "/ge_dump_workbench.png");

    // A folder: its compilations become runs; the one shown draws its PartitionedCall bodies.
    const qint64 before = w.currentRun();
    w.openPath(dumps + "/oam_tools_370");
    QTRY_VERIFY2_WITH_TIMEOUT(w.currentRun() > before && settled(w), "the folder was not imported", 60000);
    QVERIFY2(errors.isEmpty(), errors.isEmpty() ? "" : qPrintable(errors.first().first().toString()));
    QVERIFY2(w.canvas()->passView()->bodyOps > 0, "no body drawn");
  }

  // A measured profile opened while a compile is shown imports beside it: measured lanes above the simulated ones on
  // one time scale, the worst mismatches listed, the inspector's "time" row with both, static_op_mem's curve in the
  // Memory tab. The shared torch_npu profile opened in a fresh window is a run of its own whose host gaps are named.
  void aMeasuredProfileDrawsBesideTheSimulation() {
    const QString onnx = tmp_.filePath("measured_resnet.onnx");
    QCOMPARE(QProcess::execute(KILN_BINARY, {"sample", "resnet50", "--layers", "4", "-o", onnx}), 0);
    app::MainWindow w;
    w.setHistoryPath(tmp_.filePath("measured.db"));
    w.resize(1400, 900);
    w.show();
    QSignalSpy errors(&w, &app::MainWindow::errorShown);
    w.openPath(onnx);
    QTRY_VERIFY2_WITH_TIMEOUT(settled(w) && !w.chartsPending() && w.ganttView()->chart() && w.memoryView()->chart(),
                              "the compile did not finish", 60000);
    const qint64 run = w.currentRun();
    // Three kernels of the compile, "measured" at twice their simulated time, plus a task of an op Kiln never made.
    std::vector<TimelineChartTask> kernels;
    for (const TimelineChartTask& t : w.ganttView()->chart()->tasks)
      if (t.type == "KERNEL" && t.nodeId > 0 && kernels.size() < 3) kernels.push_back(t);
    QCOMPARE(kernels.size(), size_t(3));
    const QString folder = tmp_.filePath("PROF_1/mindstudio_profiler_output");
    QVERIFY(QDir().mkpath(folder));
    {
      std::ofstream csv((folder + "/op_summary_1.csv").toStdString());
      csv << "Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,Task Type,Task Start Time(us),Task Duration(us),"
             "Block Dim\n";
      double at = 1000;
      int id = 0;
      for (const TimelineChartTask& t : kernels) {
        csv << "0,1," << id++ << ",3," << t.nodeName << "," << t.opType << ",AI_CORE," << at << ","
            << 2 * (t.endUs - t.startUs) << ",8\n";
        at += 50;
      }
      csv << "0,1," << id << ",3,custom_op,CustomOp,AI_CPU," << at << ",12.5,1\n";
      std::ofstream mem((folder + "/static_op_mem.csv").toStdString());
      mem << "Device_id,Op Name,Model Name,Graph ID,Node Index Start,Node Index End,Size(KB)\n"
             "0,conv1,net,1,0,4294967295,64\n0,fc,net,1,2,5,32\n0,TOTAL,,,,,96\n";
    }
    w.openPath(tmp_.filePath("PROF_1"));
    QTRY_VERIFY2_WITH_TIMEOUT(!w.busy() && !w.chartsPending() && w.ganttView()->chart() &&
                                  w.ganttView()->chart()->measuredTasks > 0,
                              qPrintable("the profile was not drawn: " + w.statusText()), 60000);
    QVERIFY2(errors.isEmpty(), errors.isEmpty() ? "" : qPrintable(errors.first().first().toString()));
    QCOMPARE(w.currentRun(), run);  // beside the run shown, not a new one
    const TimelineChart& chart = *w.ganttView()->chart();
    QCOMPARE(chart.measuredTasks, 4);
    const std::vector<TimelineChartLane> lanes = timelineLanes(chart, false);
    QVERIFY(QString::fromStdString(lanes.front().label).startsWith("measured · stream 3"));
    QVERIFY(QString::fromStdString(lanes.back().label).startsWith("simulated · stream"));
    QTableWidget* table = w.ganttView()->mismatchTable();
    QVERIFY(table->isVisibleTo(w.ganttView()));
    QCOMPARE(table->rowCount(), 3);  // the matched kernels; the unknown op matched nothing
    // Simulated as msprof counts a task: on the cores plus the dispatch before.
    const double ratio0 = (kernels[0].endUs - kernels[0].startUs + kernels[0].dispatchUs) / (2 * (kernels[0].endUs - kernels[0].startUs));
    bool listed = false;
    for (int r = 0; r < table->rowCount(); ++r)
      listed = listed || table->item(r, 5)->text() == QString("%1×").arg(ratio0, 0, 'f', 2);
    QVERIFY(listed);
    w.inspector()->showNode(*w.canvas()->passView(), kernels[0].nodeId);
    QVERIFY2(w.inspector()->text().contains("measured " + QString::number(2 * (kernels[0].endUs - kernels[0].startUs), 'f', 2) +
                                            " µs per task (1 tasks)"),
             qPrintable(w.inspector()->text()));
    QVERIFY(!w.memoryView()->chart()->measuredLive.empty());
    QCOMPARE(w.memoryView()->chart()->measuredPeak, int64_t(96 * 1024));
    QDir().mkpath(QString(KILN_ARTIFACTS));
    w.grab().save(QString(KILN_ARTIFACTS) + "/measured_static_memory.png");
    raiseDockOf(w.ganttView());
    QTRY_VERIFY(w.ganttView()->plot()->isVisible());
    w.grab().save(QString(KILN_ARTIFACTS) + "/measured_beside_simulated.png");

    const QString shared = QString(KILN_SHARED_DIR) + "/models/ascend/msprof/torch_npu_mlp";
    if (!QFileInfo(shared).isDir()) QSKIP(qPrintable("shared msprof profiles not found at " + shared));
    app::MainWindow fresh;
    fresh.setHistoryPath(tmp_.filePath("torch_npu.db"));
    fresh.resize(1400, 900);
    fresh.show();
    QSignalSpy freshErrors(&fresh, &app::MainWindow::errorShown);
    fresh.openPath(shared);
    QTRY_VERIFY2_WITH_TIMEOUT(!fresh.busy() && !fresh.chartsPending() && fresh.ganttView()->chart(),
                              qPrintable("the shared profile did not open: " + fresh.statusText()), 60000);
    QVERIFY2(freshErrors.isEmpty(), freshErrors.isEmpty() ? "" : qPrintable(freshErrors.first().first().toString()));
    QCOMPARE(fresh.ganttView()->chart()->measuredTasks, 35);
    QVERIFY(!hostGapNote(*fresh.ganttView()->chart()).empty());
    raiseDockOf(fresh.ganttView());
    QTRY_VERIFY(fresh.ganttView()->plot()->isVisible());
    fresh.grab().save(QString(KILN_ARTIFACTS) + "/measured_profile.png");
  }

  void refusesACorruptOmClearly() {
    const QString path = tmp_.filePath("broken_model.om");
    std::ofstream(path.toStdString(), std::ios::binary) << std::string("IMOD\x00\x01\x00\x00", 8) << std::string(300, '\0');
    app::MainWindow w;
    w.setHistoryPath(tmp_.filePath("broken.db"));
    w.show();
    QSignalSpy errors(&w, &app::MainWindow::errorShown);
    w.openPath(path);
    QTRY_VERIFY_WITH_TIMEOUT(!errors.isEmpty() && !w.busy(), 60000);
    const QString msg = errors.first().first().toString();
    qInfo("%s", qPrintable(msg));
    QVERIFY2(msg.contains("broken_model.om") && msg.contains("bytes follow the header"), qPrintable(msg));
  }
};

QTEST_MAIN(OmWorkbenchTest)
#include "test_om_workbench.moc"
