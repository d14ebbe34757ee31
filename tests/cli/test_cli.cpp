// The `kiln` executable as a user (or CI) runs it: exit codes, messages naming the file, JSON output, and bad
// input handled within bounded memory and time (each run is limited to 2 GiB of address space and 60 s).
#include <signal.h>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include "support/kiln_process.h"
#include "support/older_history.h"
#include "support/sqlite_integrity.h"

namespace {

using Run = KilnRun;

Run kiln(const QStringList& args, const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment()) {
  return runKilnLimited(args, env);
}

}  // namespace

class CliTest : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir tmp_;

 private slots:
  void usage() {
    // No arguments opens the workbench; with no display that is refused with the usage text instead.
    const Run bare = kiln({}, headlessEnvironment());
    QCOMPARE(bare.code, 2);
    QVERIFY(bare.err.contains("usage"));
    // A model with no display: a clear refusal pointing at the headless commands, never a Qt abort.
    const Run noDisplay = kiln({QStringLiteral(KILN_BINARY)}, headlessEnvironment());
    QCOMPARE(noDisplay.code, 2);
    QVERIFY2(noDisplay.err.contains("no display") && noDisplay.err.contains("kiln compile"), qPrintable(noDisplay.err));
    // With one, the workbench module loads and the window stays up.
    const QString opened = workbenchStaysUp(QStringLiteral(KILN_BINARY), QString());
    QVERIFY2(opened.isEmpty(), qPrintable(opened));
    const Run help = kiln({"help"});
    QCOMPARE(help.code, 0);
    QVERIFY(help.out.contains("inspect"));
    QCOMPARE(kiln({"frobnicate"}).code, 2);
    const Run badOpt = kiln({"inspect", "--bogus", "x.onnx"});
    QCOMPARE(badOpt.code, 2);
    QVERIFY(badOpt.err.contains("--bogus"));
  }

  void sampleAndInspect() {
    const Run list = kiln({"sample", "--list"});
    QCOMPARE(list.code, 0);
    for (const char* name : {"resnet50", "bert-base", "llama", "mobilenetv2"}) QVERIFY2(list.out.contains(name), name);

    const QString path = tmp_.filePath("resnet.onnx");
    const Run made = kiln({"sample", "resnet50", "-o", path, "--no-weights"});
    QCOMPARE(made.code, 0);
    const Run text = kiln({"inspect", path});
    QCOMPARE(text.code, 0);
    QVERIFY(text.out.contains("Conv"));
    QVERIFY(text.out.contains("BatchNormalization"));

    const Run json = kiln({"inspect", path, "--json"});
    QCOMPARE(json.code, 0);
    QJsonParseError perr;
    const QJsonObject o = QJsonDocument::fromJson(json.out.toUtf8(), &perr).object();
    QCOMPARE(perr.error, QJsonParseError::NoError);
    for (const char* key : {"nodes", "ops", "inputs", "outputs", "parameters", "unsupported_ops", "warnings"})
      QVERIFY2(o.contains(key), key);
    QVERIFY(o["nodes"].toInt() > 100);
    QVERIFY(o["ops"].toObject()["Conv"].toInt() >= 50);
    QCOMPARE(o["outputs"].toArray()[0].toObject()["type"].toString(), QString::fromUtf8("fp32[1×1000]"));
    QVERIFY(o["unsupported_ops"].toObject().isEmpty());
  }

  void sampleRefusals() {
    const Run unknown = kiln({"sample", "alexnet", "-o", tmp_.filePath("x.onnx")});
    QCOMPARE(unknown.code, 2);
    QVERIFY(unknown.err.contains("alexnet"));
    // 7B-shaped weights would be tens of GiB: refused before anything is allocated (we run under a 2 GiB limit).
    const Run huge = kiln({"sample", "llama", "--layers", "32", "-o", tmp_.filePath("llama.onnx")});
    QCOMPARE(huge.code, 2);
    QVERIFY2(huge.err.contains("--no-weights"), qPrintable(huge.err));
    QCOMPARE(kiln({"sample", "resnet50", "--layers", "-4", "-o", tmp_.filePath("x.onnx")}).code, 2);
  }

  void compileRecordsHistory() {
    const QString model = tmp_.filePath("mnv2.onnx");
    QCOMPARE(kiln({"sample", "mobilenetv2", "--layers", "7", "-o", model}).code, 0);
    const QString db = tmp_.filePath("h.db");
    const Run first = kiln({"compile", model, "--history", db});
    QCOMPARE(first.code, 0);
    QVERIFY(first.out.contains("recorded as run 1"));
    const Run second = kiln({"compile", model, "--history", db, "--set", "oo_dead_code_elimination=false", "--json"});
    QCOMPARE(second.code, 0);
    const QJsonObject compiled = QJsonDocument::fromJson(second.out.toUtf8()).object();
    QCOMPARE(compiled["run"].toInt(), 2);
    QVERIFY(compiled["passes"].toArray().size() >= 8);
    for (const char* key : {"stage", "name", "ms", "changed", "nodes_before", "nodes_after"})
      QVERIFY2(compiled["passes"].toArray()[0].toObject().contains(key), key);
    // What the compile produced: fusions by rule, layout conversions, streams and events.
    QVERIFY(compiled["fused"].isObject());
    for (const char* key : {"transdata", "streams", "events"}) QVERIFY2(compiled[key].isDouble(), key);
    QVERIFY(compiled["streams"].toInt() >= 1);
    QVERIFY(first.out.contains("; streams "));

    const Run list = kiln({"history", "list", db, "--json"});
    QCOMPARE(list.code, 0);
    QCOMPARE(QJsonDocument::fromJson(list.out.toUtf8()).array().size(), 2);
    const Run show = kiln({"history", "show", db, "1"});
    QCOMPARE(show.code, 0);
    QVERIFY(show.out.contains("CommonSubexpressionElimination"));
    const Run diff = kiln({"history", "show", db, "1", "--pass", "2", "--diff", "--json"});
    QCOMPARE(diff.code, 0);
    QVERIFY(QJsonDocument::fromJson(diff.out.toUtf8()).isObject());
    QCOMPARE(kiln({"history", "show", db, "99"}).code, 2);
    QCOMPARE(sqliteIntegrity(db), QString("ok"));

    // The history opens while the model is read; a model that cannot be read leaves no new history behind, and an
    // existing one as it was.
    const QString bad = tmp_.filePath("bad.onnx");
    QFile f(bad);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("not a model");
    f.close();
    const QString fresh = tmp_.filePath("fresh.db");
    QCOMPARE(kiln({"compile", bad, "--history", fresh}).code, 2);
    QVERIFY(!QFile::exists(fresh) && !QFile::exists(fresh + "-wal") && !QFile::exists(fresh + "-shm"));
    QCOMPARE(kiln({"compile", bad, "--history", db}).code, 2);
    QCOMPARE(QJsonDocument::fromJson(kiln({"history", "list", db, "--json"}).out.toUtf8()).array().size(), 2);
  }

  void olderHistoriesAreUpgraded() {
    // Schema-6 and schema-5 histories (what Kiln wrote with a last_pass column, and before pass_rows), made here by
    // taking a current one back: the viewing commands refuse them with a hint, `history upgrade` migrates them, and
    // every pass then reads back as before.
    const QString model = tmp_.filePath("up.onnx");
    QCOMPARE(kiln({"sample", "mobilenetv2", "--layers", "7", "-o", model}).code, 0);
    const QString db = tmp_.filePath("up.db");
    QCOMPARE(kiln({"compile", model, "--history", db}).code, 0);
    const int passes = QJsonDocument::fromJson(kiln({"history", "show", db, "1", "--json"}).out.toUtf8())
                           .object()["passes"].toArray().size();
    QVERIFY(passes > 8);
    auto readBack = [&] {
      QStringList out;
      for (int k = 0; k < passes; ++k) {
        out << kiln({"history", "show", db, "1", "--pass", QString::number(k), "--diff", "--json"}).out;
        out << kiln({"history", "show", db, "1", "--pass", QString::number(k), "--json"}).out;
      }
      return out;
    };
    const QStringList before = readBack();
    QVERIFY(before.join("").contains(QRegularExpression("\"last_pass\": \\d")));  // rows that ended
    sqlite3* h = nullptr;
    for (const auto& [sql, version] :
         {std::pair(std::vector{older_history::kBackToSchema7}, 7),
          std::pair(std::vector{older_history::kBackToSchema7, older_history::kBackToSchema6}, 6),
          std::pair(std::vector{older_history::kBackToSchema7, older_history::kBackToSchema6,
                                older_history::kBackToSchema5}, 5)}) {
      QCOMPARE(sqlite3_open(db.toUtf8().constData(), &h), SQLITE_OK);
      for (const char* step : sql) QCOMPARE(sqlite3_exec(h, step, nullptr, nullptr, nullptr), SQLITE_OK);
      sqlite3_close(h);
      const Run refused = kiln({"history", "list", db});
      QCOMPARE(refused.code, 2);
      QVERIFY2(refused.err.contains(db) && refused.err.contains("history upgrade"), qPrintable(refused.err));
      const Run up = kiln({"history", "upgrade", db});
      QCOMPARE(up.code, 0);
      QVERIFY2(up.out.contains(QString("from schema %1 to 8").arg(version)), qPrintable(up.out));
      QVERIFY(kiln({"history", "upgrade", db}).out.contains("already"));
      QCOMPARE(readBack(), before);
    }
    QCOMPARE(sqliteIntegrity(db), QString("ok"));
    QCOMPARE(kiln({"history", "upgrade", tmp_.filePath("missing.db")}).code, 2);

    // A history whose pass lists are gone (a damaged file): the compile says its recording stopped, exit 1.
    QCOMPARE(sqlite3_open(db.toUtf8().constData(), &h), SQLITE_OK);
    QCOMPARE(sqlite3_exec(h, "DROP TABLE pass_rows", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(h);
    const Run damaged = kiln({"compile", model, "--history", db});
    QCOMPARE(damaged.code, 1);
    QVERIFY2(damaged.out.contains("recording stopped early") && !damaged.out.contains("recorded as run"),
             qPrintable(damaged.out));
    QVERIFY2(damaged.err.contains(db) && damaged.err.contains("pass_rows"), qPrintable(damaged.err));
  }

  void foreignDatabasesAreRefusedUntouched() {
    const QString notDb = tmp_.filePath("notes.db");
    {
      QFile f(notDb);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write("these are my notes, not a database\n");
    }
    const QString foreign = tmp_.filePath("foreign.db");
    sqlite3* h = nullptr;
    QCOMPARE(sqlite3_open(foreign.toUtf8().constData(), &h), SQLITE_OK);
    sqlite3_exec(h, "CREATE TABLE customers(id INTEGER, name TEXT); INSERT INTO customers VALUES (1, 'x');", nullptr,
                 nullptr, nullptr);
    sqlite3_close(h);
    const QString model = tmp_.filePath("r.onnx");
    QCOMPARE(kiln({"sample", "resnet50", "--no-weights", "--layers", "4", "-o", model}).code, 0);
    for (const QString& db : {notDb, foreign}) {
      QFile f(db);
      QVERIFY(f.open(QIODevice::ReadOnly));
      const QByteArray before = f.readAll();
      f.close();
      const Run r = kiln({"compile", model, "--history", db});
      QCOMPARE(r.code, 2);
      QVERIFY2(r.err.contains(db), qPrintable(r.err));
      QVERIFY(f.open(QIODevice::ReadOnly));
      QCOMPARE(f.readAll(), before);
      QVERIFY(!QFileInfo::exists(db + "-wal"));
    }
  }

  // kill -9 at random moments while compiling into a history: the database stays intact, finished runs stay
  // readable, and the killed run is marked incomplete at the next writable open.
  void killedCompilesLeaveAnIntactHistory() {
    const QString model = tmp_.filePath("llama.onnx");
    QCOMPARE(kiln({"sample", "llama", "--layers", "48", "--no-weights", "-o", model}).code, 0);
    const QString db = tmp_.filePath("kill.db");
    QCOMPARE(kiln({"compile", model, "--history", db}).code, 0);  // run 1 finishes
    QElapsedTimer full;
    full.start();
    QCOMPARE(kiln({"compile", model, "--history", db}).code, 0);  // run 2 finishes; its time bounds the kill delays
    const qint64 fullMs = std::max<qint64>(full.elapsed(), 50);
    std::srand(12345);
    int killed = 0;
    for (int i = 0; i < 12; ++i) {
      QProcess p;
      p.start(QStringLiteral(KILN_BINARY), {"compile", model, "--history", db});
      QVERIFY(p.waitForStarted());
      QThread::msleep(static_cast<unsigned long>(std::rand() % fullMs));
      if (p.state() == QProcess::Running) {
        ::kill(static_cast<pid_t>(p.processId()), SIGKILL);
        ++killed;
      }
      p.waitForFinished();
      QCOMPARE(sqliteIntegrity(db), QString("ok"));
      const Run list = kiln({"history", "list", db, "--json"});
      QCOMPARE(list.code, 0);
      const QJsonArray runs = QJsonDocument::fromJson(list.out.toUtf8()).array();
      QCOMPARE(runs[0].toObject()["status"].toString(), QString("ok"));
      QCOMPARE(runs[1].toObject()["status"].toString(), QString("ok"));
      QCOMPARE(kiln({"history", "show", db, "1", "--pass", "3"}).code, 0);
    }
    // The next writable open marks every killed run incomplete.
    QCOMPARE(kiln({"compile", model, "--history", db}).code, 0);
    const QJsonArray runs =
        QJsonDocument::fromJson(kiln({"history", "list", db, "--json"}).out.toUtf8()).array();
    int incomplete = 0, ok = 0;
    for (const auto& r : runs) {
      incomplete += r.toObject()["status"].toString() == "incomplete";
      ok += r.toObject()["status"].toString() == "ok";
    }
    qInfo("%d of 12 compiles killed mid-run; %d runs marked incomplete", killed, incomplete);
    // Every run is finished (the uninterrupted ones, and any killed after its last write) or marked incomplete; a
    // kill before the run row was written leaves no run at all. Nothing stays 'running'.
    QVERIFY(ok >= 3);
    QVERIFY(incomplete <= killed);
    QCOMPARE(runs.size(), ok + incomplete);
  }

  void badFilesExitTwoNamingTheFile() {
    const QString garbage = tmp_.filePath("garbage.onnx");
    QFile f(garbage);
    QVERIFY(f.open(QIODevice::WriteOnly));
    QByteArray junk;
    for (int i = 0; i < 100000; ++i) junk.append(char((i * 2654435761u) >> 24));
    f.write(junk);
    f.close();
    for (const QString& path : {garbage, tmp_.filePath("missing.onnx")}) {
      const Run r = kiln({"inspect", path});
      QCOMPARE(r.code, 2);
      QVERIFY2(r.err.startsWith("kiln: " + path + ": "), qPrintable(r.err));
      QCOMPARE(r.err.count('\n'), 1);  // one line
    }
  }
};

QTEST_GUILESS_MAIN(CliTest)
#include "test_cli.moc"
