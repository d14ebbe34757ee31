// Replays what the fuzzers found: every file under tests/fuzz/regressions/<target>/ (crash-*, leak-*, timeout-*
// that run.sh kept) through its target in the normal build, plus a few fixed inputs per target so the test is never
// empty. A target returns normally for input its reader accepts or refuses with a LoadError; anything else fails.
#include <QDirIterator>
#include <QtTest>

#include "fuzz_targets.h"

using namespace kiln::fuzz;

class FuzzRegressionsTest : public QObject {
  Q_OBJECT
 private slots:
  void fixedInputs() {
    const std::vector<std::string> inputs = {"", std::string(1, '\0'), std::string(300, '\xff'), "IMOD", "{}",
                                             "id,lower,upper,size\n1,0,1,8\n", "SQLite format 3"};
    for (const Target& t : targets())
      for (const std::string& in : inputs) {
        try {
          t.run(reinterpret_cast<const uint8_t*>(in.data()), in.size());
        } catch (const std::exception& e) {
          QFAIL(qPrintable(QString("%1 escaped on a fixed input: %2").arg(t.name, e.what())));
        }
      }
  }

  void regressionInputs() {
    const QString root = QStringLiteral(KILN_FUZZ_REGRESSIONS);
    int replayed = 0;
    for (const Target& t : targets()) {
      QDirIterator it(root + "/" + t.name, QDir::Files);
      while (it.hasNext()) {
        QFile f(it.next());
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray b = f.readAll();
        try {
          t.run(reinterpret_cast<const uint8_t*>(b.constData()), size_t(b.size()));
        } catch (const std::exception& e) {
          QFAIL(qPrintable(QString("%1 on %2: %3").arg(t.name, f.fileName(), e.what())));
        }
        ++replayed;
      }
    }
    qInfo("%d regression inputs replayed from %s", replayed, qPrintable(root));
  }
};

QTEST_GUILESS_MAIN(FuzzRegressionsTest)
#include "test_fuzz_regressions.moc"
