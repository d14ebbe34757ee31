// NumPy .npz archives (inputs and expected outputs shipped beside a model): arrays read back with their types and
// shapes, deflated members inflated, and every malformed archive refused with the file and the problem.
#include <QTemporaryDir>
#include <QtTest>
#include <zlib.h>

#include <fstream>

#include "util/load_error.h"
#include "io/numpy/npz_reader.h"
#include "support/npz_files.h"

using namespace kiln;
using namespace kiln::test;

class NpzReaderTest : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;

  std::string write(const std::string& name, const std::string& bytes) {
    const std::string path = tmp_.filePath(QString::fromStdString(name)).toStdString();
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }

 private slots:
  void readsStoredAndDeflatedArrays() {
    const std::string path = write("ok.npz", zipOf({{"x.npy", npy("<f4", "(2, 3)", floats({1, 2, 3, 4, 5, 6}))},
                                                    {"ids.npy", npy("<i8", "(2,)", std::string(16, '\x01')), true},
                                                    {"flag.npy", npy("|b1", "()", "\x01")}}));
    const auto arrays = readNpz(path);
    QCOMPARE(arrays.size(), size_t{3});
    QCOMPARE(arrays[0].first, std::string("x"));
    QCOMPARE(arrays[0].second.dtype(), DType::Float);
    QCOMPARE(arrays[0].second.dims(), (std::vector<int64_t>{2, 3}));
    QCOMPARE(arrays[0].second.toDouble()[5], 6.0);
    QCOMPARE(arrays[1].second.dtype(), DType::Int64);
    QCOMPARE(arrays[1].second.toInt64()[1], int64_t{0x0101010101010101});
    QCOMPARE(arrays[2].second.dims(), std::vector<int64_t>{});  // a scalar
  }

  void malformedArchivesAreRefused_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("problem");
    const std::string good = zipOf({{"x.npy", npy("<f4", "(2,)", floats({1, 2}))}});
    auto row = [](const char* name, const std::string& b, const char* problem) {
      QTest::newRow(name) << QByteArray(b.data(), qsizetype(b.size())) << QString(problem);
    };
    row("empty", "", "too short");
    row("not a zip", std::string(100, 'x'), "no central directory");
    row("truncated", good.substr(0, good.size() - 30), "no central directory");
    std::string lying = good;
    lying.replace(lying.size() - 6, 4, le(1u << 30, 4));  // central directory offset past the end
    row("directory outside", lying, "central directory");
    row("not npy", zipOf({{"x.npy", "hello world, not numpy"}}), "not a .npy array");
    row("shape vs data", zipOf({{"x.npy", npy("<f4", "(3,)", floats({1, 2}))}}), "does not match");
    row("huge dims", zipOf({{"x.npy", npy("<f4", "(4611686018427387904, 4611686018427387904)", "")}}), "does not match");
    row("overflowing dim", zipOf({{"x.npy", npy("<f4", "(99999999999999999999999,)", "")}}), "overflows");
    row("big endian", zipOf({{"x.npy", npy(">f4", "(1,)", floats({1}))}}), "not supported");
    row("object", zipOf({{"x.npy", npy("|O", "(1,)", "12345678")}}), "not supported");
    row("fortran", zipOf({{"x.npy", npy("<f4", "(1,)", floats({1}), "True")}}), "Fortran");
    std::string badDeflate = zipOf({{"x.npy", npy("<f4", "(64,)", floats(std::vector<float>(64, 1))), true}});
    badDeflate[badDeflate.find("x.npy") + 8] ^= 0x55;  // inside the deflated stream
    row("corrupt deflate", badDeflate, "corrupt");
  }

  void malformedArchivesAreRefused() {
    QFETCH(QByteArray, bytes);
    QFETCH(QString, problem);
    const std::string path = write("bad.npz", bytes.toStdString());
    try {
      readNpz(path);
      QFAIL("accepted");
    } catch (const LoadError& e) {
      QCOMPARE(e.file(), path);
      QVERIFY2(QString(e.what()).contains(problem), e.what());
    }
  }

  void sizeLimitHolds() {
    const std::string path = write("big.npz", zipOf({{"x.npy", npy("<f4", "(256,)", floats(std::vector<float>(256)))}}));
    QVERIFY_THROWS_EXCEPTION(LoadError, readNpz(path, 512));
    QCOMPARE(readNpz(path).size(), size_t{1});
  }
};

QTEST_GUILESS_MAIN(NpzReaderTest)
#include "test_npz_reader.moc"
