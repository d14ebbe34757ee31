// `kiln plan` through the real binary: text and JSON output, planner choice, exit code 2 with the file named for a
// bad trace, a missing file and bad arguments.
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include "support/kiln_process.h"

namespace {

QString write(const QTemporaryDir& dir, const QString& name, const QByteArray& text) {
  const QString path = dir.filePath(name);
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(path));
  f.write(text);
  return path;
}

}  // namespace

class PlanCliTest : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir tmp_;

 private slots:
  void jsonReport() {
    const QString trace = write(tmp_, "ok.csv", "id,lower,upper,size\n0,0,4,2\n1,0,2,3\n2,0,2,1\n3,2,4,4\n");
    const KilnRun r = runKiln({"plan", trace, "--json"});
    QCOMPARE(r.code, 0);
    QJsonParseError err;
    const QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8(), &err).object();
    QCOMPARE(err.error, QJsonParseError::NoError);
    for (const char* key : {"arena_bytes", "lower_bound_bytes", "ratio", "ms", "planner", "buffers"})
      QVERIFY2(o.contains(key), key);
    QCOMPARE(o["buffers"].toInt(), 4);
    QCOMPARE(o["lower_bound_bytes"].toInt(), 6);
    QCOMPARE(o["arena_bytes"].toInt(), 6);
    QCOMPARE(o["ratio"].toDouble(), 1.0);

    const KilnRun none = runKiln({"plan", trace, "--planner", "none", "--alignment", "8", "--json"});
    QCOMPARE(none.code, 0);
    const QJsonObject n = QJsonDocument::fromJson(none.out.toUtf8()).object();
    QCOMPARE(n["planner"].toString(), QString("none"));
    QCOMPARE(n["arena_bytes"].toInt(), 28);  // 0, 8, 16, 24 + 4

    const KilnRun text = runKiln({"plan", trace, "--planner", "exact"});
    QCOMPARE(text.code, 0);
    for (const char* word : {"buffers", "arena", "lower bound", "ratio", "planner", "time"})
      QVERIFY2(text.out.contains(word), word);
  }

  void badInputExitsWithTwo() {
    const QString bad = write(tmp_, "bad.csv", "id,lower,upper,size\n0,0,4,2\n1,5,3,1\n");
    const KilnRun r = runKiln({"plan", bad});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains(bad) && r.err.contains("line 3"), qPrintable(r.err));
    const KilnRun missing = runKiln({"plan", tmp_.filePath("missing.csv")});
    QCOMPARE(missing.code, 2);
    QVERIFY2(missing.err.contains("missing.csv"), qPrintable(missing.err));
    const QString ok = write(tmp_, "fine.csv", "0,0,1,1\n");
    QCOMPARE(runKiln({"plan", ok, "--planner", "quantum"}).code, 2);
    QCOMPARE(runKiln({"plan", ok, "--alignment", "0"}).code, 2);
    QCOMPARE(runKiln({"plan"}).code, 2);
    QVERIFY(runKiln({"help"}).out.contains("plan TRACE.csv"));
  }
};

QTEST_GUILESS_MAIN(PlanCliTest)
#include "test_plan_cli.moc"
