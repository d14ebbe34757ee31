// The precision and format passes over real exports from ../shared/models (skipped when absent): the whole
// pipeline runs without errors, the verifier stays clean after every pass, every TransData carries the type its
// inference gives, symbolic dims survive (gpt2_past), the CNNs need only a handful of layout conversions, and the
// `kiln compile` binary still runs them.
#include <QFileInfo>
#include <QProcess>
#include <QtTest>

#include "io/model_loader.h"
#include "passes/optimize/optimize_passes.h"
#include "passes/pass_manager.h"
#include "pipeline/standard_pipeline.h"
#include "support/pass_test_support.h"
#include "support/transdata_checks.h"

using namespace kiln;

namespace {

QString modelsDir() { return QStringLiteral(KILN_SHARED_DIR) + "/models"; }

}  // namespace

class OptimizeFormatsCorpusTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    if (!QFileInfo(modelsDir()).isDir())
      QSKIP(qPrintable("shared model corpus not found at " + modelsDir() + " (tests that need ../shared skip)"));
  }

  void pipelineRunsClean_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<int>("transData");  // layout conversions expected after Stage 2 (-1: only "no errors")
    QTest::addColumn<int>("fiveHd");     // convolutions in NC1HWC0
    QTest::addColumn<QString>("setting");  // an option over the defaults ("" for none)
    // CNNs: into 5HD after the input, out before the Reshape/Flatten, into NZ for the classifier, out at the end.
    QTest::newRow("mnist") << "cnn/mnist.onnx" << 4 << 2 << QString();
    QTest::newRow("cnn_mnist_pytorch") << "cnn/cnn_mnist_pytorch.onnx" << 4 << 2 << QString();
    // The classifier on a pooled 1x1 map is a 1x1 convolution in 5HD (FlattenGemmFusion): in and out only.
    QTest::newRow("light_resnet50") << "cnn/light_resnet50.onnx" << 2 << 54 << QString();
    QTest::newRow("light_inception_v2") << "cnn/light_inception_v2.onnx" << 2 << 66 << QString();
    // Unfolded BatchNorm (before its Conv), per-channel Mul/Add and channel Concats all stay in 5HD; the classifier
    // is a 1×1 Conv, so only the input and the output convert.
    QTest::newRow("light_densenet121") << "cnn/light_densenet121.onnx" << 2 << 121 << QString();
    // Channel shuffle (Reshape, Transpose, Reshape) needs the logical layout: one conversion pair per shuffle.
    QTest::newRow("light_shufflenet") << "cnn/light_shufflenet.onnx" << -1 << 50 << QString();  // + the classifier
    // Convolutions all the way to the output: in and out only.
    QTest::newRow("simplified_ssd") << "detection/simplified_ssd.onnx" << 2 << 5 << QString();
    // Transformers at their bound shapes: the matrices block into FRACTAL_NZ, with conversions around them.
    QTest::newRow("bert_toy_optimized") << "transformer/bert_toy_optimized.onnx" << 46 << 0 << QString();
    QTest::newRow("tiny_llama_fp16") << "transformer/tiny_llama_fp16/model.onnx" << 18 << 0 << QString();
    // gpt2_past's tables hold 8 positions: at the policy's past of 128 some shapes stay unknown; at 7 all are known.
    QTest::newRow("gpt2_past (policy)") << "transformer/gpt2_past.onnx" << -1 << 0 << QString();
    QTest::newRow("gpt2_past (seq_len 7)") << "transformer/gpt2_past.onnx" << -1 << 0 << QString("dim_values=seq_len:7");
    // Kept symbolic (dim_values=keep), a matrix with a symbolic sequence dim cannot be blocked: no conversions.
    QTest::newRow("bert_toy_optimized (kept symbolic)") << "transformer/bert_toy_optimized.onnx" << 0 << 0
                                                        << QString("dim_values=keep");
    QTest::newRow("gpt2_past (kept symbolic)") << "transformer/gpt2_past.onnx" << 0 << 0 << QString("dim_values=keep");
    // Only "no errors": an experimental op (ImageScaler, inferred by its kernel); convolutions inside If subgraphs stay
    // logical.
    QTest::newRow("squeezenet (unknown op)") << "cnn/squeezenet_tensor_input.onnx" << -1 << -1 << QString();
    QTest::newRow("silero_vad (subgraphs)") << "speech/silero_vad_v4.onnx" << -1 << -1 << QString();
  }
  void pipelineRunsClean() {
    QFETCH(QString, file);
    QFETCH(int, transData);
    QFETCH(int, fiveHd);
    QFETCH(QString, setting);
    const QString path = modelsDir() + "/" + file;
    if (!QFileInfo::exists(path)) QSKIP(qPrintable(path + " not present"));
    LoadedModel loaded = loadModel(path.toStdString());
    Model& m = *loaded.model;
    Options options;
    if (!setting.isEmpty()) options.set(setting.toStdString());
    PassManager pm;
    addStandardPasses(pm, options);
    const RunSummary s = pm.run(m, options);
    QVERIFY2(s.status == RunStatus::Ok, s.error.c_str());
    QCOMPARE(testing::problems(m), QString());
    QCOMPARE(testing::inconsistentTransData(m), QString());
    int64_t conv5hd = 0;
    for (const PassRecord& r : s.passes)
      if (r.name == "RefineRunningFormat" && r.counters.count("nodes_5hd")) conv5hd = r.counters.at("nodes_5hd");
    qInfo("%s: %lld TransData, %lld convolutions in 5HD, %d Conv", qPrintable(file),
          static_cast<long long>(countTransData(m)), static_cast<long long>(conv5hd), testing::countOps(m, "Conv"));
    if (transData >= 0) QCOMPARE(countTransData(m), int64_t{transData});
    if (fiveHd >= 0) QCOMPARE(conv5hd, int64_t{fiveHd});
  }

  // `kiln compile` (the real binary) over a CNN and the symbolic-shape GPT-2: exit 0, and the JSON names the passes.
  void kilnCompileRuns_data() {
    QTest::addColumn<QString>("file");
    QTest::newRow("light_resnet50") << "cnn/light_resnet50.onnx";
    QTest::newRow("gpt2_past") << "transformer/gpt2_past.onnx";
  }
  void kilnCompileRuns() {
    QFETCH(QString, file);
    const QString path = modelsDir() + "/" + file;
    if (!QFileInfo::exists(path)) QSKIP(qPrintable(path + " not present"));
    QProcess kiln;
    kiln.start(QStringLiteral(KILN_BINARY), {"compile", path, "--json"});
    QVERIFY(kiln.waitForFinished(120000));
    QCOMPARE(kiln.exitCode(), 0);
    const QString out = QString::fromUtf8(kiln.readAllStandardOutput());
    for (const char* pass : {"RefineRunningPrecision", "CastRemoval", "RefineRunningFormat",
                             "TransDataSymmetryElimination", "SameTransDataBreadthFusion", "TransDataCastFusion"})
      QVERIFY2(out.contains(QString("\"%1\"").arg(pass)), pass);
  }
};

QTEST_GUILESS_MAIN(OptimizeFormatsCorpusTest)
#include "test_optimize_formats_corpus.moc"
