// Compare Runs in the workbench, the "done means" scenario: a model compiled with the default option set
// and with O1 (no fusion) — a generated BERT at input shape 1×128, and a CNN of the shared corpus when it is
// present —; the compare window's metrics table must say what `kiln compile --json` and `kiln run --json` say for
// each, name the fusions O1 lost, and the graphs, memory plans and timelines must sit side by side with a synced
// selection and one time scale.
#include <QFile>
#include <QFileInfo>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>

#include "gantt_plot.h"
#include "gantt_view.h"
#include "graph_canvas.h"
#include "history/history_db.h"
#include "history/history_reader.h"
#include "main_window.h"
#include "memory_view.h"
#include "options_form.h"
#include "run_compare_view.h"
#include "support/gui_shots.h"
#include "support/kiln_process.h"
#include "util/json.h"

using namespace kiln;

namespace {

bool settled(app::MainWindow& w) { return !w.busy() && w.canvas()->passView() && !w.chartsPending(); }

Json kilnJson(const QStringList& args) {
  const KilnRun r = runKiln(args);
  if (r.code != 0) qWarning("kiln %s: %s", qPrintable(args.join(' ')), qPrintable(r.err));
  return Json::parse(r.out.toStdString());
}

double number(const Json& j, const char* key) { return j.find(key) ? j.find(key)->asDouble() : -1; }

}  // namespace

class RunCompareTest : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;

 private slots:
  void defaultAgainstO1_data() {
    QTest::addColumn<QString>("model");  // "sample:NAME" is generated here
    QTest::addColumn<QString>("shape");  // the input_shape option, "" for a static model
    QTest::addColumn<QString>("sharedNode");  // an op both runs keep, to check the synced selection
    QTest::newRow("generated bert-base") << "sample:bert-base" << "input_ids:1,128;attention_mask:1,128" << "Gather";
    QTest::newRow("shared light_resnet50") << QString(KILN_SHARED_DIR) + "/models/cnn/light_resnet50.onnx" << ""
                                           << "MaxPool";
  }

  void defaultAgainstO1() {
    QFETCH(QString, model);
    QFETCH(QString, shape);
    QFETCH(QString, sharedNode);
    QStandardPaths::setTestModeEnabled(true);
    if (model.startsWith("sample:")) {
      const QString path = tmp_.filePath(model.mid(7) + ".onnx");
      QCOMPARE(runKiln({"sample", model.mid(7), "--layers", "2", "-o", path}).code, 0);
      model = path;
    } else if (!QFileInfo::exists(model)) {
      QSKIP("the shared corpus (../shared/models) is absent");
    }
    auto writeOptions = [&](const QString& name, const QString& level) {
      QFile f(tmp_.filePath(name));
      if (!f.open(QIODevice::WriteOnly)) return QString();
      f.write(QString("{\"input_shape\": \"%1\", \"oo_level\": \"%2\"}").arg(shape, level).toUtf8());
      return f.fileName();
    };
    const QString defaults = writeOptions(QFileInfo(model).baseName() + "_default.json", "O3");
    const QString noFusion = writeOptions(QFileInfo(model).baseName() + "_o1.json", "O1");

    app::MainWindow w;
    w.setHistoryPath(tmp_.filePath(QFileInfo(model).baseName() + ".db"));
    w.resize(1400, 900);
    w.show();
    QVERIFY(w.optionsForm()->loadFile(defaults));
    w.openPath(model);
    QTRY_VERIFY_WITH_TIMEOUT(settled(w) && w.currentRun() > 0, 180000);
    const qint64 a = w.currentRun();
    QVERIFY(w.optionsForm()->loadFile(noFusion));
    w.rerun();
    QTRY_VERIFY_WITH_TIMEOUT(settled(w) && w.currentRun() != a, 180000);
    const qint64 b = w.currentRun();

    w.compareRuns(a, b);
    QTRY_VERIFY_WITH_TIMEOUT(!w.comparePending() && w.runCompareView()->canvas(0)->passView() &&
                                 !w.runCompareView()->canvas(0)->layoutPending() &&
                                 !w.runCompareView()->canvas(1)->layoutPending(),
                             180000);
    views::RunCompareView* v = w.runCompareView();
    QVERIFY(!v->rows().empty());
    auto row = [&](const char* metric) -> const MetricComparison& {
      const int r = v->rowOf(metric);
      if (r < 0) qFatal("no row %s", metric);
      return v->rows()[size_t(r)];
    };
    // The table says what the CLI says, for each side.
    for (const auto& [side, options] : {std::pair{0, defaults}, std::pair{1, noFusion}}) {
      const Json c = kilnJson({"compile", model, "--options", options, "--json"});
      const Json r = kilnJson({"run", model, "--options", options, "--json"});
      int64_t fused = 0;
      for (const auto& [rule, n] : c.find("fused")->asObject()) fused += n.asInt();
      auto value = [&](const char* metric) { return side == 0 ? *row(metric).a : *row(metric).b; };
      QCOMPARE(value("fusions"), double(fused));
      QCOMPARE(value("TransData"), number(c, "transdata"));
      QCOMPARE(value("streams"), number(c, "streams"));
      QCOMPARE(value("events"), number(c, "events"));
      QCOMPARE(value("arena"), number(c, "arena_bytes"));
      QCOMPARE(value("lower bound"), number(c, "lower_bound_bytes"));
      QCOMPARE(value("tasks"), number(c, "tasks"));
      QVERIFY(std::abs(value("latency") - number(r, "latency_us")) <= 1e-6 * number(r, "latency_us"));
    }
    // O1 lost the fusions: every rule the default run fired has a row where B is 0, and B is worse.
    QVERIFY(*row("fusions").a > 0);
    QCOMPARE(*row("fusions").b, 0.0);
    for (const MetricComparison& m : v->rows())
      if (m.metric.rfind("fusions: ", 0) == 0) QVERIFY2(*m.a > 0 && *m.b == 0 && m.verdict() > 0, m.metric.c_str());
    QVERIFY(row("latency").verdict() > 0);  // unfused is slower on the simulated NPU
    // Selecting a node on A selects the same node on B (same model: by id) and marks it in B's charts.
    const auto va = v->canvas(0)->passView();
    const auto vb = v->canvas(1)->passView();
    int64_t shared = 0;
    for (const auto& n : va->nodes)
      if (n.kind == layout::PassViewNode::Kind::Op && QString::fromStdString(n.opType) == sharedNode && vb->node(n.id))
        shared = n.id;
    QVERIFY(shared);
    v->canvas(0)->revealNode(shared);
    QTRY_VERIFY_WITH_TIMEOUT(v->canvas(1)->selectedNode() == shared, 30000);
    // One time scale: zooming A's timeline moves B's to the same window.
    QVERIFY(v->ganttView(0)->showsChart() && v->ganttView(1)->showsChart());
    v->ganttView(0)->plot()->zoomTime(4);
    QTRY_COMPARE(v->ganttView(1)->plot()->visibleFromUs(), v->ganttView(0)->plot()->visibleFromUs());
    QCOMPARE(v->ganttView(1)->plot()->visibleToUs(), v->ganttView(0)->plot()->visibleToUs());
    v->ganttView(0)->plot()->fit();
    QVERIFY(v->memoryView(0)->showsChart() && v->memoryView(1)->showsChart());
    kiln::testing::shot(*w.runCompareWindow(), "06_compare_default_vs_o1_" + QFileInfo(model).baseName());
  }
};

QTEST_MAIN(RunCompareTest)
#include "test_run_compare.moc"
