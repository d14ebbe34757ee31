// The plugin API as a user meets it, through the kiln executable: the example plugin's pass, op and fusion rule
// take part in a compile (and are recorded), fusion_switch turns the plugin's rule off by name, plugins are found
// through KILN_PLUGIN_PATH, and broken plugins (wrong API version, no entry point, not a library) are refused with
// a message naming the file while the compile carries on.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include "kernels/kernel.h"
#include "io/onnx/onnx_writer.h"
#include "ir/graph.h"
#include "ir/model.h"
#include "support/kiln_process.h"

using namespace kiln;

namespace {

// y = x * HardSigmoid(x; alpha 1/6, beta 0.5) + 1  — HardSwish written out, as older exporters emit it.
void writeHardSwishModel(const QString& path) {
  Model m;
  m.opsets[""] = 13;
  Graph& g = *m.graph;
  Value* x = g.addInput("x", ValueType::tensor(DType::Float, Shape::ofStatic({1, 16})));
  Node* hs = g.addNode("HardSigmoid", {x}, {"hs"}, "hardsigmoid");
  hs->setAttr("alpha", Attribute(1.0f / 6.0f));
  hs->setAttr("beta", Attribute(0.5f));
  Node* mul = g.addNode("Mul", {x, hs->output(0)}, {"hswish"}, "mul");
  Value* one = g.addInitializer("one", Tensor::fromVector(DType::Float, {1}, std::vector<float>{1.0f}));
  Node* add = g.addNode("Add", {mul->output(0), one}, {"y"}, "add");
  g.addOutput(add->output(0));
  writeOnnxFile(m, path.toStdString());
}

QJsonObject pass(const QJsonObject& run, const QString& name) {
  for (const auto& p : run["passes"].toArray())
    if (p.toObject()["name"].toString() == name) return p.toObject();
  return {};
}

}  // namespace

class PluginTest : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir tmp_;
  QString model_;

 private slots:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    model_ = tmp_.filePath("hardswish.onnx");
    writeHardSwishModel(model_);
  }

  void examplePluginTakesPart() {
    const QString db = tmp_.filePath("h.db");
    const KilnRun r = runKiln({"compile", model_, "--plugin", KILN_EXAMPLE_PLUGIN, "--json", "--history", db});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const QJsonObject run = QJsonDocument::fromJson(r.out.toUtf8()).object();
    // The pass (prepare stage), the fusion rule (optimize stage) with its counter, and the op it creates.
    QVERIFY(pass(run, "AnnotateCost")["changed"].toBool());
    const QJsonObject fusion = pass(run, "GraphFusion");
    QCOMPARE(fusion["counters"].toObject()["HardSwishXFusion"].toInt(), 1);
    QCOMPARE(fusion["nodes_before"].toInt() - fusion["nodes_after"].toInt(), 1);
    QVERIFY2(!r.err.contains("warning"), qPrintable(r.err));
    // The history shows the fused node with the rule and the original ids it replaced.
    const KilnRun show = runKiln({"history", "show", db, QString::number(run["run"].toInt()), "--pass",
                           QString::number(run["passes"].toArray().size()), "--json"});
    QVERIFY2(show.code == 0, qPrintable(show.err));
    QVERIFY2(show.out.contains("HardSwishXFusion"), qPrintable(show.out.left(2000)));
    QVERIFY(show.out.contains("fusion.replaced"));
  }

  void fusionSwitchTurnsThePluginRuleOff() {
    const KilnRun r = runKiln({"compile", model_, "--plugin", KILN_EXAMPLE_PLUGIN, "--json", "--set",
                        "fusion_switch=HardSwishXFusion:off"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const QJsonObject run = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QVERIFY(!pass(run, "GraphFusion")["changed"].toBool());
    QVERIFY(pass(run, "AnnotateCost")["changed"].toBool());  // only the rule is off
  }

  void foundThroughEnvironment() {
    auto env = QProcessEnvironment::systemEnvironment();
    env.insert("KILN_PLUGIN_PATH", QFileInfo(KILN_EXAMPLE_PLUGIN).absolutePath());  // a folder of *.so
    const KilnRun r = runKiln({"compile", model_, "--json"}, env);
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const QJsonObject run = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(pass(run, "GraphFusion")["counters"].toObject()["HardSwishXFusion"].toInt(), 1);
    // The folder also holds the broken test plugins: each refused by name, the compile still succeeds.
    QVERIFY2(r.err.contains(QFileInfo(KILN_BAD_VERSION_PLUGIN).fileName()), qPrintable(r.err));
    QVERIFY(r.err.contains(QFileInfo(KILN_NO_ENTRY_PLUGIN).fileName()));
  }

  void brokenPluginsAreRefused_data() {
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("reason");
    QTest::newRow("wrong version") << QString(KILN_BAD_VERSION_PLUGIN) << "API version 99";
    QTest::newRow("no entry point") << QString(KILN_NO_ENTRY_PLUGIN) << "missing entry point kiln_plugin_register";
    QTest::newRow("not a library") << QString() << "cannot load";
    QTest::newRow("missing file") << tmp_.filePath("nope.so") << "cannot load";
  }
  void brokenPluginsAreRefused() {
    QFETCH(QString, path);
    QFETCH(QString, reason);
    if (path.isEmpty()) path = model_;  // an ONNX file is no shared library
    const KilnRun r = runKiln({"compile", model_, "--plugin", path, "--json"});
    QVERIFY2(r.code == 0, qPrintable(r.err));  // Kiln carries on without it
    QVERIFY2(r.err.contains("plugin " + path) && r.err.contains(reason), qPrintable(r.err));
    const QJsonObject run = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QVERIFY(!pass(run, "GraphFusion")["changed"].toBool());
  }
};

QTEST_GUILESS_MAIN(PluginTest)
#include "test_plugins.moc"
