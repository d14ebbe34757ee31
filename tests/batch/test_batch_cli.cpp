// `kiln batch` through the real binary, headless: generated sample models × the default and O1 option sets write
// every report; junit.xml has one testcase per case; a broken model fails only its own cases; a gate
// `fusions < baseline` fails O1 against a default baseline with exit 1 (the "CI gates a change that loses a fusion"
// scenario) and the case page shows the lost fusions; a bad baseline or bad arguments exit 2; shards 1/2 + 2/2 are
// the whole list and --merge-reports / `kiln history merge` join them back.
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QXmlStreamReader>
#include <QtTest>

#include <set>

#include "support/kiln_process.h"

namespace {

KilnRun batch(QStringList args) {
  args.prepend("batch");
  return runKiln(args, headlessEnvironment());
}

QByteArray readAll(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

QJsonObject summary(const QString& dir) {
  return QJsonDocument::fromJson(readAll(dir + "/summary.json")).object();
}

std::multiset<QString> caseIds(const QJsonObject& s) {
  std::multiset<QString> ids;
  for (const QJsonValue& c : s["cases"].toArray()) ids.insert(c.toObject()["id"].toString());
  return ids;
}

// junit.xml read as XML: its testcases and the failure messages (an XML error fails the parse).
struct Junit {
  bool wellFormed = false;
  int testcases = 0;
  QStringList failures;
};

Junit readJunit(const QString& file) {
  Junit j;
  QXmlStreamReader x(readAll(file));
  while (!x.atEnd()) {
    if (x.readNext() != QXmlStreamReader::StartElement) continue;
    if (x.name() == QLatin1String("testcase")) ++j.testcases;
    if (x.name() == QLatin1String("failure")) j.failures << x.attributes().value("message").toString();
  }
  j.wellFormed = !x.hasError();
  return j;
}

const QString kOptions = QStringLiteral(KILN_SOURCE_DIR "/resources/options/");

}  // namespace

class BatchCliTest : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir tmp_;
  QString models_;  // mobilenetv2, bert-base (1 layer, no weights) and a broken file

  QString path(const QString& name) const { return tmp_.filePath(name); }

 private slots:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    models_ = path("models");
    QVERIFY(QDir().mkpath(models_));
    QCOMPARE(runKiln({"sample", "mobilenetv2", "-o", models_ + "/mobilenetv2.onnx"}).code, 0);
    QCOMPARE(runKiln({"sample", "bert-base", "--layers", "1", "--no-weights", "-o", models_ + "/bert1.onnx"}).code, 0);
    QFile broken(models_ + "/broken.onnx");
    QVERIFY(broken.open(QIODevice::WriteOnly));
    broken.write(readAll(models_ + "/mobilenetv2.onnx").left(4000));  // a truncated protobuf
  }

  void writesEveryReport() {
    const QString out = path("all");
    const KilnRun r = batch({"--models", models_, "--options", kOptions + "default.json", "--options",
                             kOptions + "o1.json", "--out", out, "--jobs", "2", "--history", path("all.db")});
    // The broken model fails its two cases (exit 1). bert1 under O1 fails the fp16 gate: its weights are graph
    // inputs (--no-weights) fed uniform [-1, 1] data, ~50x real weights, and the unfused LayerNorm's x² overflows
    // fp16 (65504); fused (default) it computes inside kiln:LayerNorm and passes. The others pass.
    QCOMPARE(r.code, 1);
    QCOMPARE(r.err.count(QRegularExpression("^\\[\\d/6\\] ", QRegularExpression::MultilineOption)), 6);
    for (const char* file : {"summary.json", "summary.md", "junit.xml", "index.html"})
      QVERIFY2(QFile::exists(out + "/" + file), file);
    const QJsonObject s = summary(out);
    const QJsonArray cases = s["cases"].toArray();
    QCOMPARE(cases.size(), 6);
    int failed = 0;
    for (const QJsonValue& v : cases) {
      const QJsonObject c = v.toObject();
      const bool broken = c["model"].toString().endsWith("broken.onnx");
      const bool overflows = c["model"].toString().endsWith("bert1.onnx") && c["option_set"].toString() == "o1";
      QCOMPARE(c["status"].toString(), QString(broken || overflows ? "failed" : "ok"));
      if (overflows) {
        ++failed;
        QVERIFY2(c["reason"].toString().startsWith("numerics: output") &&
                     c["reason"].toString().contains("fp16 gate"), qPrintable(c["reason"].toString()));
        QCOMPARE(c["numerics"].toString(), QString("failed"));
        continue;
      }
      if (broken) {
        ++failed;
        QVERIFY2(c["reason"].toString().contains("cannot load"), qPrintable(c["reason"].toString()));
        continue;
      }
      for (const char* key : {"nodes_before", "nodes_after", "fused", "arena_bytes", "lower_bound_bytes",
                              "no_reuse_bytes", "latency_us", "utilisation", "compile_ms"})
        QVERIFY2(c.contains(key), key);
      QVERIFY(c["functional"].toBool());
      QVERIFY(c.contains("max_abs_error"));
      QCOMPARE(c["numerics"].toString(), QString("passed"));
      QVERIFY(c["gate"].toString().contains("cosine >= 0.99"));
      QVERIFY(QFile::exists(out + "/" + c["page"].toString()));
      QVERIFY(QFile::exists(out + "/" + c["trace"].toString()));
      const QByteArray page = readAll(out + "/" + c["page"].toString());
      QCOMPARE(page.count("<svg"), 3);  // graph, memory, timeline
      if (c["option_set"].toString() == "default") QVERIFY(c["fusions"].toInt() > 0);
      else QCOMPARE(c["fusions"].toInt(), 0);  // O1: no fusion
      QVERIFY(QJsonDocument::fromJson(readAll(out + "/" + c["trace"].toString())).isObject() ||
              QJsonDocument::fromJson(readAll(out + "/" + c["trace"].toString())).isArray());
    }
    QCOMPARE(failed, 3);
    // junit.xml: one testcase per case, a failure for each broken one.
    const Junit junit = readJunit(out + "/junit.xml");
    QVERIFY(junit.wellFormed);
    QCOMPARE(junit.testcases, 6);
    QCOMPARE(junit.failures.size(), 3);
    const QByteArray md = readAll(out + "/summary.md");
    QVERIFY(md.contains("3 of 6 cases passed"));
    QVERIFY(md.contains("| ---") || md.contains("|---"));
    const QByteArray index = readAll(out + "/index.html");
    QVERIFY(index.contains("<table class=\"sortable\">"));
    QVERIFY(!index.contains("src=\"http"));  // self-contained
    // The history holds the four compiled cases.
    const KilnRun list = runKiln({"history", "list", path("all.db"), "--json"});
    QCOMPARE(list.code, 0);
    QCOMPARE(QJsonDocument::fromJson(list.out.toUtf8()).array().size(), 4);
  }

  void gateCatchesALostFusion() {
    const QString base = path("base"), o1 = path("o1"), same = path("same");
    const QString model = models_ + "/mobilenetv2.onnx";
    QCOMPARE(batch({"--models", model, "--options", kOptions + "default.json", "--out", base, "--timing-only",
                    "--quiet"}).code, 0);
    // The same option set against its own baseline: every gate passes.
    const KilnRun ok = batch({"--models", model, "--options", kOptions + "default.json", "--out", same, "--timing-only",
                              "--baseline", base + "/summary.json", "--fail-on", "fusions < baseline", "--fail-on",
                              "latency > 1.05*baseline", "--quiet"});
    QCOMPARE(ok.code, 0);
    QVERIFY(ok.err.isEmpty());  // --quiet
    QCOMPARE(summary(same)["gates_skipped"].toInt(), 0);
    // A baseline without this model: the gate cannot run, which the reports and stderr say (it is no failure).
    const KilnRun unmatched = batch({"--models", models_ + "/bert1.onnx", "--options", kOptions + "default.json",
                                     "--out", path("unmatched"), "--timing-only", "--baseline", base + "/summary.json",
                                     "--fail-on", "fusions < baseline"});
    QCOMPARE(unmatched.code, 0);
    QVERIFY2(unmatched.err.contains("1 gate evaluations skipped"), qPrintable(unmatched.err));
    QVERIFY(readAll(path("unmatched") + "/summary.md").contains("Skipped gates"));
    // O1 loses every fusion: the gate fails the case, exit 1, and the reports say why.
    const KilnRun r = batch({"--models", model, "--options", kOptions + "o1.json", "--out", o1, "--timing-only",
                             "--baseline", base + "/summary.json", "--fail-on", "fusions < baseline"});
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err.contains("fusions < baseline"), qPrintable(r.err));
    const QJsonObject c = summary(o1)["cases"].toArray()[0].toObject();
    QCOMPARE(c["passed"].toBool(), false);
    QCOMPARE(c["gates"].toArray()[0].toObject()["result"].toString(), QString("failed"));
    const Junit junit = readJunit(o1 + "/junit.xml");
    QVERIFY(junit.wellFormed);
    QCOMPARE(junit.failures.size(), 1);
    QVERIFY2(junit.failures[0].contains("fusions < baseline"), qPrintable(junit.failures[0]));
    const QByteArray page = readAll(o1 + "/" + c["page"].toString());
    QVERIFY(page.contains("ConvBatchNormFusion"));  // the fusions-by-rule table against the baseline
    QVERIFY(page.contains("worse"));
  }

  void badArgumentsExit2() {
    QFile bad(path("bad_summary.json"));
    QVERIFY(bad.open(QIODevice::WriteOnly));
    bad.write(R"({"kiln_batch":1,"cases":[{"id":"a","model":"m","arena_bytes":"big"}]})");
    bad.close();
    const QString model = models_ + "/mobilenetv2.onnx", out = path("never");
    const KilnRun badBase = batch({"--models", model, "--options", kOptions + "o1.json", "--out", out, "--baseline",
                                   bad.fileName(), "--fail-on", "fusions < baseline"});
    QCOMPARE(badBase.code, 2);
    QVERIFY2(badBase.err.startsWith("kiln: " + bad.fileName() + ": cases[0]: 'arena_bytes'"), qPrintable(badBase.err));
    const KilnRun notJson = batch({"--models", model, "--options", kOptions + "o1.json", "--out", out, "--baseline",
                                   models_ + "/mobilenetv2.onnx"});
    QCOMPARE(notJson.code, 2);
    QVERIFY(notJson.err.startsWith("kiln: " + models_ + "/mobilenetv2.onnx: "));
    QCOMPARE(batch({"--models", model, "--options", kOptions + "o1.json", "--out", out, "--fail-on", "latncy > 1"}).code, 2);
    QCOMPARE(batch({"--models", model, "--options", kOptions + "o1.json", "--out", out, "--fail-on", "latency > baseline"}).code, 2);
    QCOMPARE(batch({"--models", model, "--options", kOptions + "o1.json", "--out", out, "--shard", "3/2"}).code, 2);
    QCOMPARE(batch({"--models", model, "--out", out}).code, 2);
    QCOMPARE(batch({"--models", path("nowhere"), "--options", kOptions + "o1.json", "--out", out}).code, 2);
    QCOMPARE(batch({"--models", model, "--options", model, "--out", out}).code, 2);  // not an option set
    const KilnRun badOverlay = batch({"--models", model, "--options", kOptions + "o1.json", "--out", out, "--overlay", "speed"});
    QCOMPARE(badOverlay.code, 2);
    QVERIFY2(badOverlay.err.contains("--overlay 'speed': not a metric (simulated time"), qPrintable(badOverlay.err));
    QVERIFY(!QFile::exists(out + "/summary.json"));
  }

  // --overlay: the case page's graph coloured by the workbench's overlay, with its legend; a metric this case has no
  // data for is said on the page, not drawn as if it had.
  void overlayColoursTheCaseGraph() {
    const QString model = models_ + "/mobilenetv2.onnx";
    for (const QString& metric : {QString("simulated-time"), QString("compute unit"), QString("annotation:no.such")}) {
      const QString out = path("overlay_" + QString(metric).replace(' ', '_').replace(':', '_'));
      const KilnRun r = batch({"--models", model, "--options", kOptions + "default.json", "--out", out, "--overlay", metric});
      QCOMPARE(r.code, 0);
      const QJsonArray cases = summary(out)["cases"].toArray();
      QCOMPARE(cases.size(), 1);
      const QByteArray page = readAll(out + "/" + cases[0].toObject()["page"].toString());
      if (metric == "simulated-time") {
        QVERIFY(page.contains("colour: simulated time"));
        QVERIFY2(page.contains("simulated time (sum of its nodes): ") || page.contains("\nsimulated time: ") ||
                     page.contains("simulated time: "), "a node's or group's tooltip carries its value");
      } else if (metric == "compute unit") {
        QVERIFY(page.contains("colour: compute unit"));
        QVERIFY(page.contains(">cube<") || page.contains(">vector<"));
      } else {
        QVERIFY(!page.contains("colour: annotation"));
        QVERIFY2(page.contains("No &#39;annotation:no.such&#39; overlay") || page.contains("No 'annotation:no.such' overlay"),
                 "the page says the overlay is missing");
      }
    }
  }

  void shardsMergeBackToTheWhole() {
    const QString whole = path("whole"), s1 = path("shard1"), s2 = path("shard2"), merged = path("merged");
    const QStringList common = {"--models", models_, "--options", kOptions + "default.json", "--options",
                                kOptions + "o1.json", "--timing-only", "--quiet"};
    QCOMPARE(batch(common + QStringList{"--out", whole}).code, 1);  // the broken model's cases
    QCOMPARE(batch(common + QStringList{"--out", s1, "--shard", "1/2", "--history", path("s1.db")}).code, 1);
    QCOMPARE(batch(common + QStringList{"--out", s2, "--shard", "2/2", "--history", path("s2.db")}).code, 1);
    const auto all = caseIds(summary(whole)), a = caseIds(summary(s1)), b = caseIds(summary(s2));
    QCOMPARE(a.size() + b.size(), all.size());
    std::multiset<QString> both = a;
    both.insert(b.begin(), b.end());
    QCOMPARE(both, all);
    QCOMPARE(summary(s1)["shard"].toString(), QString("1/2"));

    const KilnRun m = batch({"--merge-reports", s1, s2, "--out", merged, "--quiet"});
    QCOMPARE(m.code, 1);
    QCOMPARE(caseIds(summary(merged)), all);
    // Same cases in the same order as the unsharded run, their pages copied along.
    const QJsonArray wholeCases = summary(whole)["cases"].toArray(), mergedCases = summary(merged)["cases"].toArray();
    for (int i = 0; i < wholeCases.size(); ++i) {
      QCOMPARE(mergedCases[i].toObject()["id"], wholeCases[i].toObject()["id"]);
      QCOMPARE(mergedCases[i].toObject()["fusions"], wholeCases[i].toObject()["fusions"]);
      if (mergedCases[i].toObject().contains("page"))
        QVERIFY(QFile::exists(merged + "/" + mergedCases[i].toObject()["page"].toString()));
    }
    const Junit junit = readJunit(merged + "/junit.xml");
    QVERIFY(junit.wellFormed);
    QCOMPARE(junit.testcases, wholeCases.size());
    // Merging a shard twice is refused.
    QCOMPARE(batch({"--merge-reports", s1, s1, "--out", path("twice")}).code, 2);

    const KilnRun h = runKiln({"history", "merge", path("merged.db"), path("s1.db"), path("s2.db")});
    QCOMPARE(h.code, 0);
    const KilnRun list = runKiln({"history", "list", path("merged.db"), "--json"});
    QCOMPARE(QJsonDocument::fromJson(list.out.toUtf8()).array().size(), 4);  // the broken model records no run
    const KilnRun shown = runKiln({"history", "show", path("merged.db"), "4", "--json"});
    QCOMPARE(shown.code, 0);
    // A file that is not a history is refused, and the output is not created from it.
    QCOMPARE(runKiln({"history", "merge", path("x.db"), models_ + "/mobilenetv2.onnx"}).code, 2);
  }

  void sharedCorpusSmoke() {
    const QString dir = QStringLiteral(KILN_SHARED_DIR "/models/patterns");
    if (!QFileInfo(dir).isDir()) QSKIP("../shared/models not present: the corpus smoke run is skipped");
    // Real files written by others, a few tiny ones: every case finishes (ok or failed with a reason), none crashes.
    const KilnRun r = batch({"--models", dir + "/conv_add_relu.onnx", dir + "/mobilenet_v3_small_excerpt.onnx",
                             "--options", kOptions + "default.json", "--out", path("corpus"), "--quiet"});
    QVERIFY2(r.code == 0 || r.code == 1, qPrintable(r.err));
    QCOMPARE(summary(path("corpus"))["cases"].toArray().size(), 2);
  }
};

QTEST_GUILESS_MAIN(BatchCliTest)
#include "test_batch_cli.moc"
