// The history under faults and load, with the real `kiln batch` writing it (two jobs, two option sets):
//   - SIGKILL 20 times, half at random moments of a batch, half just after a reader sees a run in progress (a fast
//     compile leaves few random moments inside a run, and those are what the test is about): after each kill the
//     database passes PRAGMA integrity_check, every run that had finished is exactly as it was (status, passes, the
//     graph at its last pass, its timeline), and the runs the killed process left behind are marked incomplete by
//     the next writable open, their committed passes still readable. Nothing stays 'running'.
//   - The workbench's reader (a read-only HistoryDb + HistoryReader per query, as MainWindow opens them) queries
//     in a loop while a batch writes: no query fails or waits out the busy timeout, and it sees the runs appear.
#include <signal.h>

#include <QDir>
#include <QElapsedTimer>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <atomic>
#include <map>
#include <random>
#include <thread>

#include "history/history_db.h"
#include "history/history_emulation.h"
#include "history/history_reader.h"
#include "support/kiln_process.h"
#include "support/sqlite_integrity.h"

namespace {

using namespace kiln;

struct RunState {
  std::string status;
  QString content;  // everything recorded for the run, in a comparable form
};

// Every row a reader gets for the run: its passes, the graph at its last pass and its timeline. Reading it all
// is also the check that an interrupted run's committed passes are readable.
QString runContent(const HistoryDb& db, const HistoryReader& reader, const RunInfo& run) {
  QString s = QString("passes=%1 last=%2 nodes_after=%3\n")
                  .arg(run.passCount)
                  .arg(run.lastPass)
                  .arg(run.nodesAfter.value_or(-1));
  for (const PassInfo& p : reader.passes(run.id))
    s += QString("pass %1 %2 changed=%3\n").arg(p.seq).arg(QString::fromStdString(p.name)).arg(p.changed);
  if (run.lastPass >= 0) {
    const GraphSnapshot g = reader.graphAt(run.id, run.lastPass);
    for (const NodeRow& n : g.nodes)
      s += QString("node %1 %2 %3 %4\n")
               .arg(n.id)
               .arg(QString::fromStdString(n.opType), QString::fromStdString(n.name),
                    QString::fromStdString(n.annotationsJson));
    for (const EdgeRow& e : g.edges) s += QString("edge %1>%2.%3\n").arg(e.valueId).arg(e.consumerNode).arg(e.consumerIndex);
  }
  for (const TimelineRow& t : readTimeline(db, run.id))
    s += QString("task %1 %2 %3 %4\n").arg(t.task).arg(QString::fromStdString(t.type)).arg(t.stream).arg(t.startUs);
  return s;
}

std::map<int64_t, RunState> readRuns(const QString& path) {
  HistoryDb db(path.toStdString(), HistoryDb::Mode::ReadOnly);
  HistoryReader reader(db);
  std::map<int64_t, RunState> runs;
  for (const RunInfo& r : reader.listRuns()) runs[r.id] = {r.status, runContent(db, reader, r)};
  return runs;
}

// Whether a reader sees a run in progress. A failed open or query (the writer creating the file) reads as "not yet".
bool runInProgress(const QString& path) {
  try {
    HistoryDb db(path.toStdString(), HistoryDb::Mode::ReadOnly);
    for (const RunInfo& r : HistoryReader(db).listRuns())
      if (r.status == "running") return true;
  } catch (const std::exception&) {
  }
  return false;
}

}  // namespace

class HistoryUnderLoadTest : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir tmp_;
  QString models_;
  int outs_ = 0;

  QString path(const QString& name) const { return tmp_.filePath(name); }

  // Both sample models × the default and O1 option sets, two jobs: four runs, two written at a time. Timing only:
  // recording the passes is then much of a batch's time.
  QStringList batchArgs(const QString& db) {
    const QString options = QStringLiteral(KILN_SOURCE_DIR "/resources/options/");
    return {"batch",     "--models", models_, "--options", options + "default.json", "--options", options + "o1.json",
            "--history", db,         "--out",  path(QString("out%1").arg(outs_++)), "--jobs", "2", "--quiet", "--timing-only"};
  }

 private slots:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    models_ = path("models");
    QVERIFY(QDir().mkpath(models_));
    QCOMPARE(runKiln({"sample", "llama", "--layers", "8", "--no-weights", "-o", models_ + "/llama.onnx"}).code, 0);
    QCOMPARE(runKiln({"sample", "resnet50", "--layers", "4", "--no-weights", "-o", models_ + "/resnet.onnx"}).code, 0);
  }

  void killedBatchesLeaveAnIntactHistory() {
    const QString db = path("kill.db");
    QElapsedTimer full;
    full.start();
    QCOMPARE(runKiln(batchArgs(db), headlessEnvironment()).code, 0);
    const qint64 fullMs = std::max<qint64>(full.elapsed(), 100);  // bounds the kill delays
    std::map<int64_t, RunState> finished = readRuns(db);
    QCOMPARE(finished.size(), size_t(4));
    for (const auto& [id, r] : finished) QCOMPARE(r.status, std::string("ok"));

    std::mt19937 rng(20261201);
    int killed = 0, interrupted = 0;
    for (int i = 0; i < 20; ++i) {
      QProcess p;
      p.setProcessEnvironment(headlessEnvironment());
      p.start(QStringLiteral(KILN_BINARY), batchArgs(db));
      QVERIFY(p.waitForStarted());
      if (i % 2 == 0) {
        QThread::msleep(static_cast<unsigned long>(rng() % static_cast<unsigned>(fullMs)));
      } else {  // the runs a previous kill left 'running' were marked incomplete by the open after it
        while (p.state() == QProcess::Running && !runInProgress(db)) QThread::msleep(1);
        QThread::msleep(static_cast<unsigned long>(rng() % 4));
      }
      if (p.state() == QProcess::Running) {
        ::kill(static_cast<pid_t>(p.processId()), SIGKILL);
        ++killed;
      }
      QVERIFY(p.waitForFinished(120000));
      QCOMPARE(sqliteIntegrity(db), QString("ok"));
      // What the next kiln does first: a writable open marks the runs of the dead writer incomplete.
      { HistoryDb writer(db.toStdString()); }
      QCOMPARE(sqliteIntegrity(db), QString("ok"));
      const std::map<int64_t, RunState> now = readRuns(db);
      for (const auto& [id, before] : finished) {
        QVERIFY2(now.count(id), qPrintable(QString("run %1 vanished").arg(id)));
        QCOMPARE(now.at(id).status, before.status);
        QCOMPARE(now.at(id).content, before.content);
      }
      for (const auto& [id, r] : now) {
        if (finished.count(id)) continue;
        QVERIFY2(r.status == "ok" || r.status == "incomplete",
                 qPrintable(QString("run %1 is %2 after the kill").arg(id).arg(QString::fromStdString(r.status))));
        interrupted += r.status == "incomplete";
        finished[id] = r;  // from now on it must stay as it is
      }
    }
    qInfo("%d of 20 batches killed mid-run, %d runs marked incomplete, %zu runs in the history", killed, interrupted,
          finished.size());
    QVERIFY(killed > 0);
    // Half the kills wait for a run in progress: a test whose kills never interrupt a run tests nothing.
    QVERIFY2(interrupted * 4 >= killed, "too few kills interrupted a run");
  }

  void readerQueriesWhileABatchWrites() {
    const QString db = path("load.db");
    QCOMPARE(runKiln(batchArgs(db), headlessEnvironment()).code, 0);  // the file exists (the workbench opens existing ones)
    const size_t before = readRuns(db).size();
    std::atomic<bool> done{false};
    std::atomic<int> queries{0}, sawRunning{0};
    std::string failure;
    std::thread reader([&] {
      while (!done) {
        try {
          QElapsedTimer t;
          t.start();
          const std::map<int64_t, RunState> runs = readRuns(db);  // opens, lists, reads every run, closes
          if (t.elapsed() > 4000) failure = "a read took " + std::to_string(t.elapsed()) + " ms (waited on a lock)";
          for (const auto& [id, r] : runs) sawRunning += r.status == "running";
          ++queries;
        } catch (const std::exception& e) {
          failure = e.what();
          return;
        }
      }
    });
    const KilnRun r = runKiln(batchArgs(db), headlessEnvironment());
    done = true;
    reader.join();
    QCOMPARE(r.code, 0);
    QVERIFY2(failure.empty(), failure.c_str());
    qInfo("%d reads while the batch wrote; %d saw a run in progress", queries.load(), sawRunning.load());
    QVERIFY(queries > 0);
    QVERIFY(sawRunning > 0);
    QCOMPARE(readRuns(db).size(), before + 4);
    QCOMPARE(sqliteIntegrity(db), QString("ok"));
  }
};

QTEST_GUILESS_MAIN(HistoryUnderLoadTest)
#include "test_history_under_load.moc"
