// The ONNX backend suite (Debian's libonnx-testdata) through the emulator's reference mode, as `kiln conformance`
// runs it: every test folder of node/, pytorch-converted/, pytorch-operator/ and simple/. Floors, not exact counts:
// the node suite must pass at least 85% of all its tests (skipped ones count against it), the PyTorch suites 95%.
// Every failure is printed with its reason.
#include <QDir>
#include <QtTest>

#include <map>

#include "emulator/conformance.h"

using namespace kiln;

namespace {

const char* kSuiteRoot = "/usr/share/libonnx-testdata/data";

struct Tally {
  int passed = 0, failed = 0, skipped = 0;
  int total() const { return passed + failed + skipped; }
};

Tally runSuite(const QString& name) {
  Tally t;
  for (const std::string& dir : findConformanceTests(std::string(kSuiteRoot) + "/" + name.toStdString())) {
    const ConformanceResult r = runConformanceTest(dir);
    if (r.status == ConformanceStatus::Passed) {
      ++t.passed;
    } else {
      ++(r.status == ConformanceStatus::Failed ? t.failed : t.skipped);
      qInfo("  %s %s/%s: %s", conformanceStatusName(r.status), r.suite.c_str(), r.name.c_str(), r.reason.c_str());
    }
  }
  qInfo("%s: %d passed, %d failed, %d skipped of %d", qPrintable(name), t.passed, t.failed, t.skipped, t.total());
  return t;
}

}  // namespace

class EmulatorConformanceTest : public QObject {
  Q_OBJECT
 private slots:
  void suites_data() {
    QTest::addColumn<QString>("suite");
    QTest::addColumn<double>("floor");
    QTest::newRow("node") << "node" << 0.85;
    QTest::newRow("pytorch-converted") << "pytorch-converted" << 0.95;
    QTest::newRow("pytorch-operator") << "pytorch-operator" << 0.95;
  }
  void suites() {
    QFETCH(QString, suite);
    QFETCH(double, floor);
    if (!QDir(QString(kSuiteRoot) + "/" + suite).exists())
      QSKIP("libonnx-testdata is not installed (apt-get install libonnx-testdata)");
    const Tally t = runSuite(suite);
    QVERIFY(t.total() > 20);
    const double rate = double(t.passed) / t.total();
    QVERIFY2(rate >= floor, qPrintable(QString("%1: %2% of all tests pass, below the %3% floor")
                                           .arg(suite)
                                           .arg(100 * rate, 0, 'f', 1)
                                           .arg(100 * floor, 0, 'f', 0)));
  }
};

QTEST_GUILESS_MAIN(EmulatorConformanceTest)
#include "test_emulator_conformance.moc"
