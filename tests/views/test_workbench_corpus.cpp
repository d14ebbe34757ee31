// Every shared model (../shared/models, skipped when absent) opened in the workbench as a person would: it either
// compiles and shows its graph, or the window reports a clear error naming the file — never a crash or a hang. For
// each model that compiles, every visible pass is stepped through with → and must show its graph with the diff
// (the view's added/removed counts match the history's diff). Screenshots of a few go to tests/artifacts/corpus/.
#include <QDirIterator>
#include <QGraphicsScene>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include "graph_canvas.h"
#include "history/history_db.h"
#include "history/history_reader.h"
#include "main_window.h"
#include "pass_navigator.h"

using namespace kiln;

namespace {
bool settled(app::MainWindow& w) { return !w.busy() && w.canvas()->passView() && !w.canvas()->scene()->items().isEmpty(); }

// The canvas draws the main graph and the bodies of control-flow nodes (If, Loop, Scan), not a fused kernel's
// originals: a node counts when every owner up its chain is a control-flow node at either pass.
bool drawnOnCanvas(const NodeRow& n, const GraphSnapshot& a, const GraphSnapshot& b) {
  int64_t owner = n.graphOwner;
  for (int depth = 0; owner != 0; ++depth) {
    const NodeRow* o = b.node(owner);
    if (!o) o = a.node(owner);
    if (!o || depth > 64 || !o->domain.empty()) return false;
    if (o->opType != "If" && o->opType != "Loop" && o->opType != "Scan" && o->opType != "SequenceMap") return false;
    owner = o->graphOwner;
  }
  return true;
}
}  // namespace

class WorkbenchCorpusTest : public QObject {
  Q_OBJECT
 private slots:
  void everySharedModelOpens() {
    const QString root = QString(KILN_SHARED_DIR) + "/models";
    if (!QFileInfo(root).isDir()) QSKIP("../shared/models not present: corpus GUI test skipped");
    QStandardPaths::setTestModeEnabled(true);
    QSettings().clear();
    QTemporaryDir tmp;
    QStringList models;
    for (QDirIterator it(root, {"*.onnx", "*.om"}, QDir::Files, QDirIterator::Subdirectories); it.hasNext();)
      models << it.next();
    models.sort();
    QVERIFY(!models.isEmpty());
    app::MainWindow w;
    w.setHistoryPath(tmp.filePath("corpus.db"));
    w.resize(1400, 900);
    w.show();
    int opened = 0, refused = 0, passesShown = 0;
    QStringList refusals;
    for (const QString& model : models) {
      QSignalSpy errors(&w, &app::MainWindow::errorShown);
      const qint64 before = w.currentRun();
      w.openPath(model);
      // Either a new run is shown and laid out, or an error is reported.
      QTRY_VERIFY2_WITH_TIMEOUT((w.currentRun() != before && settled(w)) || (!errors.isEmpty() && !w.busy()),
                                qPrintable(model), 120000);
      if (w.currentRun() == before) {
        ++refused;
        const QString msg = errors.first().first().toString();
        QVERIFY2(msg.contains(QFileInfo(model).fileName()), qPrintable(model + ": " + msg));
        refusals << QFileInfo(model).fileName() + ": " + msg.left(120);
        continue;
      }
      ++opened;
      // Step through every visible pass and compare the drawn diff with the history's.
      HistoryDb db(tmp.filePath("corpus.db").toStdString(), HistoryDb::Mode::ReadOnly);
      HistoryReader reader(db);
      const QList<int> visible = w.navigator()->visiblePasses();
      w.navigator()->selectPass(visible.first());
      for (int seq : visible) {
        w.navigator()->selectPass(seq);
        QTRY_VERIFY2_WITH_TIMEOUT(settled(w) && w.canvas()->passView()->toPass == seq,
                                  qPrintable(QString("%1 pass %2").arg(model).arg(seq)), 120000);
        const auto& v = *w.canvas()->passView();
        if (v.fromPass >= 0) {
          const GraphDiff d = reader.diff(w.currentRun(), v.fromPass, seq);
          bool inSubgraph = false;  // snapshots are read only when a subgraph node changed (rare, and costly)
          for (const auto* list : {&d.removedNodes, &d.addedNodes})
            for (const auto& n : *list) inSubgraph = inSubgraph || n.graphOwner != 0;
          const GraphSnapshot atFrom = inSubgraph ? reader.graphAt(w.currentRun(), v.fromPass) : GraphSnapshot{};
          const GraphSnapshot atTo = inSubgraph ? reader.graphAt(w.currentRun(), seq) : GraphSnapshot{};
          int64_t removed = 0, added = 0;
          for (const auto& n : d.removedNodes) removed += drawnOnCanvas(n, atFrom, atTo);
          for (const auto& n : d.addedNodes) added += drawnOnCanvas(n, atFrom, atTo);
          QVERIFY2(v.removed == removed && v.added == added, qPrintable(QString("%1 pass %2").arg(model).arg(seq)));
        }
        ++passesShown;
      }
      if (opened % 60 == 1) {
        QDir().mkpath(QString(KILN_ARTIFACTS) + "/corpus");
        w.grab().save(QString(KILN_ARTIFACTS) + "/corpus/" + QFileInfo(model).completeBaseName() + ".png");
      }
    }
    qInfo("%d models: %d opened (%d passes shown), %d refused with a message", static_cast<int>(models.size()), opened,
          passesShown, refused);
    for (const auto& r : refusals) qInfo("  refused %s", qPrintable(r));
    QVERIFY(opened > models.size() * 9 / 10);
  }
};

QTEST_MAIN(WorkbenchCorpusTest)
#include "test_workbench_corpus.moc"
