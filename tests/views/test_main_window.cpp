// The workbench as a person uses it, offscreen: open the bundled sample, wait for the compile and the layout, step
// through the passes and check the diff overlay marks exactly the nodes the history says the pass removed, added or
// changed, search, read the inspector, change an option and rerun, compare two passes side by side; then the shared
// gpt2_past model (skipped without ../shared). Screenshots of each state go to tests/artifacts/ in the build tree.
#include <QComboBox>
#include <QDir>
#include <QElapsedTimer>
#include <QGraphicsItem>
#include <QGraphicsScene>
#include <QListWidget>
#include <QMimeData>
#include <QProcess>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTreeWidget>
#include <QTreeWidgetItemIterator>
#include <QRegularExpression>
#include <QtTest>

#include <signal.h>

#include "graph_canvas.h"
#include "graph_items.h"
#include "layout/node_overlay.h"
#include "support/control_flow_model.h"
#include "history/history_db.h"
#include "io/onnx/onnx_writer.h"
#include "ir/model.h"
#include "history/history_emulation.h"
#include "history/history_reader.h"
#include "fused_subgraph_view.h"
#include "inspector.h"
#include "util/json.h"
#include "report/timeline_chart.h"
#include "report/memory_chart.h"
#include "gantt_view.h"
#include "memory_view.h"
#include "layout/fused_subgraph.h"
#include "main_window.h"
#include "support/gui_shots.h"
#include "options_form.h"
#include "pass_navigator.h"

using namespace kiln;

namespace {

using kiln::testing::shot;

bool settled(app::MainWindow& w) { return !w.busy() && w.canvas()->passView() && !w.canvas()->scene()->items().isEmpty(); }

// Pass number of the first pass with this name in the run.
int passNamed(const std::vector<PassInfo>& passes, const std::string& name) {
  for (const auto& p : passes)
    if (p.name == name) return p.seq;
  return -1;
}

}  // namespace

class MainWindowTest : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir tmp_;
  std::unique_ptr<app::MainWindow> w_;

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);  // QSettings and app data away from the user's
    QSettings().clear();
    QVERIFY(tmp_.isValid());
    w_ = std::make_unique<app::MainWindow>();
    w_->setHistoryPath(tmp_.filePath("history.db"));
    w_->resize(1400, 900);
    w_->show();
  }

  void opensTheSample() {
    QElapsedTimer t;
    t.start();
    w_->openPath(KILN_SAMPLE);
    QTRY_VERIFY2_WITH_TIMEOUT(settled(*w_), qPrintable(QString("busy %1 layout %2 view %3 status '%4'")
                                                           .arg(w_->busy())
                                                           .arg(w_->canvas()->layoutPending())
                                                           .arg(bool(w_->canvas()->passView()))
                                                           .arg(w_->statusText())),
                              60000);
    qInfo("sample: first painted graph after %lld ms", static_cast<long long>(t.elapsed()));
    QVERIFY(w_->currentRun() > 0);
    QCOMPARE(w_->runList()->count(), 1);
    shot(*w_, "01_sample_opened");
  }

  void diffOverlayMarksWhatThePassChanged() {
    HistoryDb db(tmp_.filePath("history.db").toStdString(), HistoryDb::Mode::ReadOnly);
    HistoryReader r(db);
    const auto passes = r.passes(w_->currentRun());
    const int bn = passNamed(passes, "GraphFusion");
    QVERIFY(bn > 0);
    w_->navigator()->selectPass(bn);
    QTRY_VERIFY_WITH_TIMEOUT(settled(*w_) && w_->canvas()->passView()->toPass == bn, 30000);
    const GraphDiff diff = r.diff(w_->currentRun(), bn);
    QVERIFY(!diff.removedNodes.empty());
    // Open every group holding a removed node so that all of them are drawn.
    for (const auto& n : diff.removedNodes) w_->canvas()->revealNode(n.id);
    QTRY_VERIFY_WITH_TIMEOUT(settled(*w_), 30000);
    QList<int64_t> want;
    for (const auto& n : diff.removedNodes)
      if (n.graphOwner == 0) want << n.id;
    std::sort(want.begin(), want.end());
    // Op nodes only: a graph output whose value a rewrite replaced (the classifier's) also has a removed terminal.
    QList<int64_t> removedOps;
    for (int64_t id : w_->canvas()->nodesInState(layout::NodeState::Removed))
      if (id > 0) removedOps << id;
    QCOMPARE(removedOps, want);
    // GraphFusion replaces Conv+BatchNorm(+activation) groups by new fused nodes: those are drawn as added.
    QList<int64_t> added;
    for (const auto& n : diff.addedNodes)
      if (n.graphOwner == 0) added << n.id;
    std::sort(added.begin(), added.end());
    QVERIFY(!added.isEmpty());
    QList<int64_t> addedOps;
    for (int64_t id : w_->canvas()->nodesInState(layout::NodeState::Added))
      if (id > 0) addedOps << id;
    QCOMPARE(addedOps, added);
    QList<int64_t> changed;
    for (const auto& c : diff.changedNodes)
      if (c.after.graphOwner == 0) changed << c.after.id;
    for (int64_t id : w_->canvas()->nodesInState(layout::NodeState::Changed)) QVERIFY(changed.contains(id));
    shot(*w_, "02_graph_fusion_diff");
    // Keyboard: N selects a changed node, ↓ moves the selection to the item below it.
    QTest::keyClick(w_->canvas(), Qt::Key_N);
    const int64_t first = w_->canvas()->selectedNode();
    QVERIFY(want.contains(first) || changed.contains(first) || added.contains(first));
    QGraphicsItem* before = w_->canvas()->scene()->selectedItems().value(0);
    QVERIFY(before);
    QTest::keyClick(w_->canvas(), Qt::Key_Down);
    QGraphicsItem* after = w_->canvas()->scene()->selectedItems().value(0);
    QVERIFY(after && after != before);
    QVERIFY(after->sceneBoundingRect().center().y() > before->sceneBoundingRect().center().y());
    // ←/→ stepping moves between visible passes.
    QVERIFY(w_->navigator()->step(-1));
    QTRY_VERIFY_WITH_TIMEOUT(settled(*w_) && w_->canvas()->passView()->toPass < bn, 30000);
    QVERIFY(w_->navigator()->step(1));
    QTRY_VERIFY_WITH_TIMEOUT(settled(*w_) && w_->canvas()->passView()->toPass == bn, 30000);
  }

  void fusedNodeExpandsAndLinksBack() {
    HistoryDb db(tmp_.filePath("history.db").toStdString(), HistoryDb::Mode::ReadOnly);
    HistoryReader r(db);
    const layout::FusionIndex index = layout::readFusions(r, w_->currentRun());
    const layout::FusionRecord* f = nullptr;
    for (const auto& rec : index.records())
      if (rec.replaced.size() >= 2 && (!f || rec.replaced.size() > f->replaced.size())) f = &rec;
    QVERIFY(f);
    // The fused node at the pass that made it; Enter on it (as a double-click) expands it in the Fused panel.
    w_->goToNode(f->fusedNode, f->pass);
    QTRY_VERIFY_WITH_TIMEOUT(settled(*w_) && w_->canvas()->passView()->toPass == f->pass &&
                                 w_->canvas()->selectedNode() == f->fusedNode,
                             30000);
    QVERIFY2(w_->inspector()->text().contains("fused by\t" + QString::fromStdString(f->rule)),
             qPrintable(w_->inspector()->text()));
    QTest::keyClick(w_->canvas(), Qt::Key_Return);
    QTRY_VERIFY_WITH_TIMEOUT(w_->fusedView()->showsFusion() && w_->fusedView()->fusedNode() == f->fusedNode &&
                                 w_->fusedView()->canvas()->passView() && !w_->fusedView()->canvas()->layoutPending(),
                             30000);
    QVERIFY(w_->fusedView()->summary().contains(QString::fromStdString(f->rule)));
    QVERIFY(w_->fusedView()->summary().contains("HBM saved"));
    const auto sub = w_->fusedView()->canvas()->passView();
    int drawnOriginals = 0;
    for (int64_t id : f->replaced) drawnOriginals += sub->node(id) != nullptr;
    QVERIFY(drawnOriginals > 0);
    // Select an original node in the panel: the inspector says where it went.
    int64_t original = 0;
    for (int64_t id : f->replaced)
      if (sub->node(id)) original = id;
    w_->fusedView()->canvas()->revealNode(original);
    QTRY_VERIFY_WITH_TIMEOUT(w_->inspector()->text().contains("absorbed into"), 30000);
    QVERIFY(w_->inspector()->text().contains(QString::fromStdString(f->rule) + " at pass " + QString::number(f->pass)));
    shot(*w_, "05_fused_subgraph");
    // From the original node at the imported graph, the "absorbed into" row leads back to the fused node.
    w_->navigator()->selectPass(0);
    QTRY_VERIFY_WITH_TIMEOUT(settled(*w_) && w_->canvas()->passView()->toPass == 0, 30000);
    w_->canvas()->revealNode(original);
    QTRY_VERIFY_WITH_TIMEOUT(settled(*w_) && w_->inspector()->text().contains("absorbed into"), 30000);
    auto* tree = w_->inspector()->findChild<QTreeWidget*>();
    QTreeWidgetItem* link = nullptr;
    for (QTreeWidgetItemIterator it(tree); *it; ++it)
      if ((*it)->text(0) == "absorbed into" && !link) link = *it;
    QVERIFY(link);
    emit tree->itemDoubleClicked(link, 1);
    QTRY_VERIFY_WITH_TIMEOUT(settled(*w_) && w_->canvas()->passView()->toPass == index.absorber(original)->pass &&
                                 w_->canvas()->selectedNode() == index.absorber(original)->fusedNode,
                             30000);
  }

  void memoryViewReplansWithAnotherPlanner() {
    QTRY_VERIFY_WITH_TIMEOUT(settled(*w_) && !w_->chartsPending(), 60000);
    const MemoryChart* recorded = w_->memoryView()->chart();
    QVERIFY(recorded && recorded->planned && recorded->replannedWith.empty());
    const int64_t compiledArena = recorded->arenaBytes, bound = recorded->lowerBound;
    // No reuse: every tensor its own block, so the arena is the sum of the blocks — never below the compiled plan.
    w_->memoryView()->setPlanner("none");
    QTRY_VERIFY_WITH_TIMEOUT(!w_->memoryView()->replanning() && w_->memoryView()->chart() &&
                                 w_->memoryView()->chart()->replannedWith == "none",
                             60000);
    QVERIFY(w_->memoryView()->chart()->arenaBytes >= compiledArena);
    QCOMPARE(w_->memoryView()->chart()->lowerBound, bound);  // same lifetimes, same bound
    w_->memoryView()->setPlanner("best_of");
    QTRY_VERIFY_WITH_TIMEOUT(!w_->memoryView()->replanning() && w_->memoryView()->chart()->replannedWith == "best_of",
                             60000);
    QVERIFY(w_->memoryView()->chart()->arenaBytes >= bound);
    w_->memoryView()->setPlanner("");
    QTRY_VERIFY_WITH_TIMEOUT(w_->memoryView()->chart()->replannedWith.empty(), 10000);
    QCOMPARE(w_->memoryView()->chart()->arenaBytes, compiledArena);
  }

  void overlaysColourNodesAndRulesRingThem() {
    QTRY_VERIFY_WITH_TIMEOUT(settled(*w_) && !w_->chartsPending(), 60000);
    views::GraphCanvas* c = w_->canvas();
    // The run's simulated timeline arrived with its charts: the canvas offers it as an overlay.
    QComboBox* by = w_->colourByBox();
    QTRY_VERIFY_WITH_TIMEOUT(by->findData("simulated time") >= 0, 30000);
    QVERIFY(by->findData("output bytes") >= 0);
    QVERIFY(by->findData("compute unit") >= 0);
    by->setCurrentIndex(by->findData("simulated time"));
    QVERIFY(c->currentOverlay().has_value());
    QCOMPARE(c->currentOverlay()->metric, std::string("simulated time"));
    int coloured = 0, drawn = 0;
    for (QGraphicsItem* item : c->scene()->items())
      if (item->type() == views::NodeItem::Type) {
        ++drawn;
        coloured += static_cast<views::NodeItem*>(item)->overlayFill().isValid();
      }
    QVERIFY2(coloured > 0, qPrintable(QString("%1 of %2 nodes coloured").arg(coloured).arg(drawn)));
    QCOMPARE(QSettings().value("canvas/overlay").toString(), QString("simulated time"));
    shot(*w_, "mw_20_overlay_simulated_time");
    by->setCurrentIndex(by->findData("compute unit"));  // categories, one swatch each in the legend
    QVERIFY(c->currentOverlay() && c->currentOverlay()->categorical);
    by->setCurrentIndex(0);  // back to the default look
    QVERIFY(!c->currentOverlay().has_value());
    // A highlight rule: every Conv drawn gets a ring; the rules are kept in the settings.
    layout::HighlightRule conv;
    conv.kind = layout::HighlightRule::Kind::OpType;
    conv.pattern = "Conv";
    conv.colour = {230, 20, 20};
    w_->setHighlightRules({conv});
    int ringed = 0, convs = 0;
    for (QGraphicsItem* item : c->scene()->items())
      if (item->type() == views::NodeItem::Type) {
        auto* n = static_cast<views::NodeItem*>(item);
        const bool isConv = n->node().opType == "Conv";
        convs += isConv;
        ringed += n->highlight().isValid();
        if (n->highlight().isValid()) QVERIFY(isConv);
      }
    QCOMPARE(ringed, convs);
    QVERIFY(QSettings().value("canvas/highlightRules").toString().contains("\"Conv\""));
    shot(*w_, "mw_21_highlight_rule");
    w_->setHighlightRules({});
  }

  void flatLayoutShowsEveryNodeAndCancelGoesBack() {
    QTRY_VERIFY_WITH_TIMEOUT(settled(*w_), 60000);
    views::GraphCanvas* c = w_->canvas();
    c->setFlat(true);
    QTRY_VERIFY_WITH_TIMEOUT(!c->layoutPending(), 120000);
    int drawn = 0;
    for (QGraphicsItem* item : c->scene()->items()) drawn += item->type() == views::NodeItem::Type;
    int ops = 0;
    for (const auto& n : c->passView()->nodes) ops += n.kind == layout::PassViewNode::Kind::Op;
    QCOMPARE(drawn >= ops, true);
    // Back to groups; a flat request cancelled while it runs goes back to them too.
    c->setFlat(false);
    QTRY_VERIFY_WITH_TIMEOUT(!c->layoutPending(), 60000);
    c->setFlat(true);
    if (c->layoutPending()) {
      QVERIFY(c->cancelLayout());
      QVERIFY(!c->flat());
    } else {
      c->setFlat(false);  // laid out from the cache at once: nothing to cancel
    }
    QTRY_VERIFY_WITH_TIMEOUT(!c->layoutPending(), 60000);
  }

  void exportsWhatIsShown() {
    QTRY_VERIFY_WITH_TIMEOUT(settled(*w_) && !w_->chartsPending(), 60000);
    // The whole graph, not the viewport: the SVG's size is the scene's, the PNG at least as large.
    const QRectF scene = w_->canvas()->scene()->itemsBoundingRect();
    const QString svg = tmp_.filePath("graph.svg"), png = tmp_.filePath("graph.png");
    QCOMPARE(w_->exportGraph(svg), QString());
    QFile f(svg);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray text = f.readAll();
    QVERIFY(text.contains("<svg"));
    const QRegularExpressionMatch m =
        QRegularExpression("viewBox=\"0 0 ([0-9.]+) ([0-9.]+)\"").match(QString::fromUtf8(text));
    QVERIFY2(m.hasMatch(), text.left(400).constData());
    QVERIFY(m.captured(1).toDouble() >= scene.width() && m.captured(2).toDouble() >= scene.height());
    QCOMPARE(w_->exportGraph(png), QString());
    const QImage image(png);
    QVERIFY(!image.isNull() && image.width() >= scene.width() && image.height() >= scene.height());
    QVERIFY(w_->exportGraph(tmp_.filePath("graph.txt")).contains("graph.txt"));
    // The memory plan: one CSV row per tensor, the JSON's arena the chart's.
    const MemoryChart* chart = w_->memoryView()->chart();
    QVERIFY(chart && chart->planned);
    QCOMPARE(w_->exportMemoryPlan(tmp_.filePath("memory.csv")), QString());
    QFile csv(tmp_.filePath("memory.csv"));
    QVERIFY(csv.open(QIODevice::ReadOnly));
    QCOMPARE(csv.readAll().count('\n'), qsizetype(chart->blocks.size() + 1));
    QCOMPARE(w_->exportMemoryPlan(tmp_.filePath("memory.json")), QString());
    QFile js(tmp_.filePath("memory.json"));
    QVERIFY(js.open(QIODevice::ReadOnly));
    const Json mem = Json::parse(js.readAll().toStdString());
    QCOMPARE(mem.find("arena_bytes")->asInt(), chart->arenaBytes);
    QCOMPARE(mem.find("tensors")->asArray().size(), chart->blocks.size());
    // The timeline: a complete event per task on its stream track.
    QCOMPARE(w_->exportTimeline(tmp_.filePath("trace.json")), QString());
    QFile tr(tmp_.filePath("trace.json"));
    QVERIFY(tr.open(QIODevice::ReadOnly));
    const Json trace = Json::parse(tr.readAll().toStdString());
    size_t complete = 0;
    for (const Json& e : trace.find("traceEvents")->asArray()) complete += e.find("ph")->asString() == "X";
    QVERIFY(complete >= w_->ganttView()->chart()->tasks.size());
  }

  void searchFindsAndInspectorShows() {
    w_->findNext("Conv");
    QTRY_VERIFY_WITH_TIMEOUT(settled(*w_), 30000);
    const int64_t id = w_->canvas()->selectedNode();
    QVERIFY(id > 0);
    QVERIFY(w_->canvas()->itemForNode(id));
    const QString text = w_->inspector()->text();
    QVERIFY2(text.contains("Conv"), qPrintable(text));
    QVERIFY2(text.contains("inputs") && text.contains("fp32"), qPrintable(text));  // tensors with their dtype
    shot(*w_, "03_search_conv");
    // After the last pass the validity check has placed every node on an engine.
    w_->navigator()->selectPass(w_->navigator()->visiblePasses().back());
    QTRY_VERIFY_WITH_TIMEOUT(settled(*w_), 30000);
    w_->canvas()->revealNode(id);
    QTRY_VERIFY_WITH_TIMEOUT(settled(*w_) && w_->inspector()->text().contains("engine"), 30000);
  }

  void stage2DecisionsAreVisible() {
    HistoryDb db(tmp_.filePath("history.db").toStdString(), HistoryDb::Mode::ReadOnly);
    HistoryReader r(db);
    const auto passes = r.passes(w_->currentRun());
    // RefineRunningFormat adds the layout conversions: the canvas draws them as added nodes.
    const int format = passNamed(passes, "RefineRunningFormat");
    QVERIFY(format > 0);
    w_->navigator()->selectPass(format);
    QTRY_VERIFY_WITH_TIMEOUT(settled(*w_) && w_->canvas()->passView()->toPass == format, 30000);
    const GraphDiff diff = r.diff(w_->currentRun(), format);
    QList<int64_t> transData;
    for (const auto& n : diff.addedNodes)
      if (n.opType == "TransData" && n.graphOwner == 0) transData << n.id;
    QVERIFY(!transData.isEmpty());
    for (int64_t id : transData) w_->canvas()->revealNode(id);
    QTRY_VERIFY_WITH_TIMEOUT(settled(*w_), 30000);
    for (int64_t id : transData) QVERIFY(w_->canvas()->nodesInState(layout::NodeState::Added).contains(id));
    shot(*w_, "03b_refine_running_format");
    // After the stream pass, a Conv tells its layout, engine subgraph and stream in the inspector.
    const int streams = passNamed(passes, "StreamAssignment");
    QVERIFY(streams > format);
    w_->navigator()->selectPass(streams);
    QTRY_VERIFY_WITH_TIMEOUT(settled(*w_) && w_->canvas()->passView()->toPass == streams, 30000);
    w_->findNext("Conv");
    QTRY_VERIFY_WITH_TIMEOUT(settled(*w_) && w_->canvas()->selectedNode() > 0, 30000);
    const QString text = w_->inspector()->text();
    for (const char* key : {"stream", "partition", "NC1HWC0"}) QVERIFY2(text.contains(key), qPrintable(text));
    shot(*w_, "03c_stream_assignment");
  }

  void changeAnOptionAndRerun() {
    const qint64 before = w_->currentRun();
    QVERIFY(w_->optionsForm()->loadFile(QString(KILN_SOURCE_DIR) + "/resources/options/no_folding.json"));
    QCOMPARE(w_->optionsForm()->options().getBool("oo_constant_folding"), false);
    w_->rerun();
    QTRY_VERIFY_WITH_TIMEOUT(w_->currentRun() != before && settled(*w_), 60000);
    QCOMPARE(w_->runList()->count(), 2);
    HistoryDb db(tmp_.filePath("history.db").toStdString(), HistoryDb::Mode::ReadOnly);
    const RunInfo run = HistoryReader(db).run(w_->currentRun());
    QVERIFY2(run.optionsJson.find("\"oo_constant_folding\":false") != std::string::npos ||
                 run.optionsJson.find("\"oo_constant_folding\": false") != std::string::npos,
             run.optionsJson.c_str());
    shot(*w_, "04_rerun_no_folding");
  }

  void verifyNumericsFillsTheErrorColumn() {
    // Run ▸ Verify Numerics: every pass's error against the original is recorded and shown beside the pass.
    const qint64 before = w_->currentRun();
    w_->setVerifyNumerics(true);
    w_->rerun();
    QTRY_VERIFY_WITH_TIMEOUT(w_->currentRun() != before && settled(*w_), 180000);
    w_->setVerifyNumerics(false);
    HistoryDb db(tmp_.filePath("history.db").toStdString(), HistoryDb::Mode::ReadOnly);
    const auto rows = readPassAccuracy(db, w_->currentRun());
    QCOMPARE(rows.size(), HistoryReader(db).passes(w_->currentRun()).size());
    auto* tree = w_->navigator()->findChild<QTreeWidget*>();
    QVERIFY(tree && !tree->isColumnHidden(3));
    int shown = 0;
    for (QTreeWidgetItemIterator it(tree); *it; ++it) shown += !(*it)->text(3).isEmpty();
    QVERIFY2(shown > 2, "the error column shows the verified passes");
    // Each row is one pass's verdict; the navigator names the first pass over tolerance, if any.
    int firstBad = -1;
    for (const PassAccuracyRow& r : rows)
      if (r.status == "exceeds" && firstBad < 0) firstBad = r.seq;
    QCOMPARE(w_->navigator()->firstExceeding(), firstBad);
    shot(*w_->navigator(), "04b_pass_accuracy");
  }

  void cancelStopsTheCompile() {
    // Cancel right after Rerun: the worker sees the flag before its first pass, deterministically.
    QSignalSpy errors(w_.get(), &app::MainWindow::errorShown);
    const qint64 before = w_->currentRun();
    w_->rerun();
    QVERIFY(w_->busy());
    QTest::keyClick(w_.get(), Qt::Key_Escape);  // Run → Cancel
    QTRY_VERIFY_WITH_TIMEOUT(w_->currentRun() != before && settled(*w_), 60000);
    HistoryDb db(tmp_.filePath("history.db").toStdString(), HistoryDb::Mode::ReadOnly);
    const RunInfo run = HistoryReader(db).run(w_->currentRun());
    QCOMPARE(run.status, std::string("stopped"));
    QVERIFY2(run.error.find("cancelled") != std::string::npos, run.error.c_str());
    QVERIFY(w_->statusText().contains("cancelled"));
  }

  void dropOpensAFile() {
    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(KILN_SAMPLE)});
    const qint64 before = w_->currentRun();
    QDragEnterEvent enter(QPoint(50, 50), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(w_.get(), &enter);
    QVERIFY(enter.isAccepted());
    QDropEvent drop(QPointF(50, 50), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(w_.get(), &drop);
    QTRY_VERIFY_WITH_TIMEOUT(w_->currentRun() != before && settled(*w_), 60000);
  }

  void compareSideBySide() {
    w_->setCompareEnabled(true);
    QTRY_VERIFY_WITH_TIMEOUT(w_->compareCanvas()->passView() && !w_->compareCanvas()->layoutPending() &&
                                 !w_->compareCanvas()->scene()->items().isEmpty(),
                             30000);
    shot(*w_, "05_compare");
    w_->setCompareEnabled(false);
  }

  // An If whose else branch holds a Loop: each body is a group after its owner, closed at first; opened, its nodes
  // are drawn like any others, the Loop's own body nested inside.
  void controlFlowBodiesOpenAsGroups() {
    const auto cf = testing::makeControlFlowModel();
    const QString file = tmp_.filePath("control_flow.onnx");
    writeOnnxFile(cf->model, file.toStdString());

    w_->openPath(file);
    QTRY_VERIFY_WITH_TIMEOUT(settled(*w_) && w_->windowTitle().contains("control_flow"), 60000);
    views::GraphCanvas* c = w_->canvas();
    QTRY_VERIFY_WITH_TIMEOUT(!c->layoutPending(), 30000);
    auto bodyGroup = [&](const std::string& label) {
      for (size_t i = 0; i < c->scopes().groups().size(); ++i)
        if (c->scopes().groups()[i].kind == layout::ScopeGroup::Kind::Body && c->scopes().groups()[i].label == label)
          return int(i);
      return -1;
    };
    const int thenGroup = bodyGroup("then_branch of If 'check'"), elseGroup = bodyGroup("else_branch of If 'check'");
    QVERIFY2(thenGroup > 0 && elseGroup > 0, qPrintable(w_->statusText()));
    // The owner is drawn, the bodies closed: their nodes are not.
    const layout::PassView& v = *c->passView();
    // After the compile the then branch's Neg and Abs are one fused kernel (its originals are the fused-subgraph
    // view's, not a body): find the nodes by where they sit.
    int64_t ifId = 0, negId = 0, twiceId = 0;
    for (const auto& n : v.nodes)
      if (n.name == "check") ifId = n.id;
    for (const auto& n : v.nodes) {
      if (n.owner == ifId && n.body == "then_branch" && n.kind == layout::PassViewNode::Kind::Op) negId = n.id;
      if (n.name == "twice") twiceId = n.id;
    }
    QVERIFY(ifId && negId && twiceId);
    QVERIFY(c->itemForNode(ifId));
    QVERIFY(!c->itemForNode(negId) || c->itemForNode(negId)->type() != views::NodeItem::Type);
    c->openGroup(thenGroup, true);
    QTRY_VERIFY_WITH_TIMEOUT(!c->layoutPending() && c->itemForNode(negId) && c->itemForNode(negId)->type() == views::NodeItem::Type, 30000);
    // The Loop's body is nested in the else branch: revealing its node opens both.
    c->revealNode(twiceId);
    QTRY_VERIFY_WITH_TIMEOUT(!c->layoutPending() && c->itemForNode(twiceId) && c->itemForNode(twiceId)->type() == views::NodeItem::Type, 30000);
    QVERIFY(c->isGroupOpen(elseGroup));
    QVERIFY2(v.bodyOps >= 4, qPrintable(QString::number(v.bodyOps)));  // then: 1 or 2; else: the Loop and its body's 2
    shot(*w_, "05b_control_flow_bodies");
  }

  // The README's picture (scripts/refresh_screenshot.sh copies it to docs/workbench.png): a real ResNet-50 at
  // GraphFusion, a fused convolution selected so that the inspector says what it absorbed.
  void readmeScreenshot() {
    const QString model = QString(KILN_SHARED_DIR) + "/models/cnn/light_resnet50.onnx";
    if (!QFileInfo::exists(model)) QSKIP("../shared/models/cnn/light_resnet50.onnx not present");
    // ATC's defaults, whatever the slots before changed.
    QVERIFY(w_->optionsForm()->loadFile(QString(KILN_SOURCE_DIR) + "/resources/options/default.json"));
    w_->openPath(model);
    QTRY_VERIFY_WITH_TIMEOUT(settled(*w_) && w_->windowTitle().contains("light_resnet50"), 120000);
    HistoryDb db(tmp_.filePath("history.db").toStdString(), HistoryDb::Mode::ReadOnly);
    HistoryReader r(db);
    const layout::FusionIndex index = layout::readFusions(r, w_->currentRun());
    const layout::FusionRecord* f = nullptr;
    for (const auto& rec : index.records())
      if (rec.rule == "ConvBatchNormFusion" && (!f || rec.fusedNode < f->fusedNode)) f = &rec;
    QVERIFY(f);
    w_->goToNode(f->fusedNode, f->pass);
    QTRY_VERIFY_WITH_TIMEOUT(settled(*w_) && !w_->chartsPending() && w_->canvas()->selectedNode() == f->fusedNode,
                             60000);
    QVERIFY(w_->inspector()->text().contains("fused by"));
    shot(*w_, "readme_workbench");
  }

  void opensGpt2Past() {
    const QString model = QString(KILN_SHARED_DIR) + "/models/transformer/gpt2_past.onnx";
    if (!QFileInfo::exists(model)) QSKIP("../shared/models/transformer/gpt2_past.onnx not present");
    QElapsedTimer t;
    t.start();
    w_->openPath(model);
    QTRY_VERIFY_WITH_TIMEOUT(settled(*w_) && w_->windowTitle().contains("gpt2_past"), 120000);
    qInfo("gpt2_past: first painted graph after %lld ms (compile + history + layout, groups closed)",
          static_cast<long long>(t.elapsed()));
    shot(*w_, "06_gpt2_past");
  }

  // A `kiln batch` writing into the history the window shows: its runs join the run list while it runs (the window
  // watches the file), no read fails, and a run picked while the batch is still writing opens.
  void runListFollowsABatchWritingTheHistory() {
    QTRY_VERIFY_WITH_TIMEOUT(!w_->busy(), 60000);
    const QString models = tmp_.filePath("batch_models");
    QVERIFY(QDir().mkpath(models));
    const QString model = models + "/llama.onnx";
    // A transformer of a few thousand nodes: each run writes many passes, so the batch is caught mid-run (below).
    QCOMPARE(QProcess::execute(KILN_BINARY, {"sample", "llama", "--layers", "32", "--no-weights", "-o", model}), 0);
    const QString db = tmp_.filePath("batch.db");
    const QString options = QStringLiteral(KILN_SOURCE_DIR "/resources/options/");
    auto batchArgs = [&](const QString& out) {
      return QStringList{"batch", "--models", models, "--options", options + "default.json", "--options",
                         options + "o1.json", "--options", options + "fp32.json", "--history", db, "--out", out,
                         "--timing-only", "--quiet"};
    };
    QCOMPARE(QProcess::execute(KILN_BINARY, batchArgs(tmp_.filePath("batch_out1"))), 0);
    w_->openPath(db);
    QTRY_VERIFY_WITH_TIMEOUT(settled(*w_), 60000);
    QCOMPARE(w_->runList()->count(), 3);

    QSignalSpy errors(w_.get(), &app::MainWindow::errorShown);
    QProcess batch;
    batch.start(KILN_BINARY, batchArgs(tmp_.filePath("batch_out2")));
    QVERIFY(batch.waitForStarted());
    // A compile now takes well under the watcher's 1 s poll, so the test does not race it: as soon as the database
    // itself says a new run is running, the batch is held (SIGSTOP) until the list shows that run and it is picked.
    // A writer stopped mid-transaction does not block a WAL reader, so the list still refreshes.
    struct Resume {
      qint64 pid = 0;
      ~Resume() { if (pid > 0) ::kill(static_cast<pid_t>(pid), SIGCONT); }
    } held;
    const kiln::HistoryDb reading(db.toStdString(), kiln::HistoryDb::Mode::ReadOnly);
    const int64_t lastBefore = kiln::HistoryReader(reading).listRuns().back().id;
    int seenWhileWriting = 3;
    qint64 picked = 0;
    QElapsedTimer heldFor;
    while (batch.state() != QProcess::NotRunning) {
      QTest::qWait(held.pid ? 50 : 5);
      // The list has had 10 polls to show the held run: give up (the checks below then fail) rather than hang.
      if (held.pid && heldFor.hasExpired(10000)) {
        ::kill(static_cast<pid_t>(held.pid), SIGCONT);
        held.pid = -1;
      }
      seenWhileWriting = std::max(seenWhileWriting, int(w_->runList()->count()));
      if (!picked && !held.pid)
        for (const kiln::RunInfo& r : kiln::HistoryReader(reading).listRuns())
          if (r.id > lastBefore && r.status == "running" && ::kill(static_cast<pid_t>(batch.processId()), SIGSTOP) == 0) {
            held.pid = batch.processId();
            heldFor.start();
            break;
          }
      for (int i = 0; i < w_->runList()->count() && !picked; ++i)
        if (QListWidgetItem* item = w_->runList()->item(i); item->text().contains(" · running · ")) {
          picked = QRegularExpression("^run (\\d+) ").match(item->text()).captured(1).toLongLong();
          emit w_->runList()->itemActivated(item);  // what a double-click does
        }
      if (picked && held.pid > 0) {
        QTest::qWait(200);  // the pick's read starts while the run is still unfinished
        ::kill(static_cast<pid_t>(held.pid), SIGCONT);
        held.pid = 0;
      }
    }
    QCOMPARE(batch.exitCode(), 0);
    QTRY_COMPARE_WITH_TIMEOUT(w_->runList()->count(), 6, 5000);
    QTRY_VERIFY_WITH_TIMEOUT(settled(*w_), 60000);
    qInfo("run list: %d runs while the batch wrote (3 before, 6 after); picked run %lld while it was running",
          seenWhileWriting, static_cast<long long>(picked));
    QVERIFY2(seenWhileWriting > 3, "the list did not follow the batch while it ran");
    QVERIFY(picked > 0);
    QCOMPARE(w_->currentRun(), picked);
    // Once the batch finished it, the run picked while running is shown whole.
    QTRY_VERIFY2_WITH_TIMEOUT(w_->statusText().contains(QString("Run %1: ok").arg(picked)), qPrintable(w_->statusText()),
                              10000);
    QVERIFY2(errors.isEmpty(), errors.isEmpty() ? "" : qPrintable(errors.first().first().toString()));
    // The batch's last writes (each run's end) reach the list too.
    auto allOk = [this] {
      for (int i = 0; i < w_->runList()->count(); ++i)
        if (!w_->runList()->item(i)->text().contains(" · ok · ")) return false;
      return true;
    };
    QTRY_VERIFY_WITH_TIMEOUT(allOk(), 5000);
  }

  void badFileIsAClearError() {
    QSignalSpy errors(w_.get(), &app::MainWindow::errorShown);
    const QString bad = tmp_.filePath("garbage.onnx");
    QFile f(bad);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("not a model at all");
    f.close();
    w_->openPath(bad);
    QTRY_VERIFY_WITH_TIMEOUT(!errors.isEmpty(), 30000);
    QVERIFY2(errors.first().first().toString().contains("garbage.onnx"), qPrintable(errors.first().first().toString()));
  }

  void cleanupTestCase() { w_.reset(); }
};

QTEST_MAIN(MainWindowTest)
#include "test_main_window.moc"
