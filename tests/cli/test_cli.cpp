// The `kiln` executable as a user (or CI) runs it: exit codes, messages naming the file, JSON output, and bad
// input handled within bounded memory and time (each run is limited to 2 GiB of address space and 60 s).
#include <sys/resource.h>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

namespace {

struct Run {
  int code = -1;
  QString out, err;
};

Run kiln(const QStringList& args) {
  QProcess p;
  p.setChildProcessModifier([] {
    rlimit lim{};
    lim.rlim_cur = lim.rlim_max = 2ull << 30;
    setrlimit(RLIMIT_AS, &lim);
  });
  p.start(QStringLiteral(KILN_BINARY), args);
  if (!p.waitForFinished(60000)) {
    p.kill();
    p.waitForFinished();
    return {-2, {}, "timed out"};
  }
  Run r;
  r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
  r.out = QString::fromUtf8(p.readAllStandardOutput());
  r.err = QString::fromUtf8(p.readAllStandardError());
  return r;
}

}  // namespace

class CliTest : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir tmp_;

 private slots:
  void usage() {
    QCOMPARE(kiln({}).code, 2);
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
