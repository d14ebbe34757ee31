// Every real model in ../shared/models loads, infers and verifies; contrib-op models list what is unsupported;
// the light_* models' inferred output shapes match the expected outputs stored beside them.
#include <QDirIterator>
#include <QtTest>

#include "io/model_loader.h"
#include "io/tensor_file.h"
#include "ir/verifier.h"
#include "memory/reuse_handoffs.h"
#include "passes/pass_manager.h"
#include "pipeline/standard_pipeline.h"
#include "report/model_summary.h"

using namespace kiln;

namespace {
QString modelsDir() { return QStringLiteral(KILN_SHARED_DIR) + "/models"; }
}  // namespace

class CorpusTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    if (!QFileInfo(modelsDir()).isDir())
      QSKIP(qPrintable("shared model corpus not found at " + modelsDir() + " (tests that need ../shared skip)"));
  }

  void everyModelInspects() {
    int count = 0;
    QStringList failures;
    QDirIterator it(modelsDir(), {"*.onnx"}, QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext()) {
      const QString path = it.next();
      ++count;
      try {
        LoadedModel lm = loadModel(path.toStdString());
        const ModelSummary s = summarizeModel(*lm.model, lm.inference, lm.warnings);
        if (s.nodes <= 0) failures << path + ": no nodes";
        bool hasContrib = false;
        lm.model->graph->forEachGraph([&](const Graph& g) {
          for (const Node* n : g.nodes())
            if (n->domain() == "com.microsoft") hasContrib = true;
        });
        if (hasContrib && s.unsupportedOps.empty()) failures << path + ": contrib ops not listed as unsupported";
        // The JSON form has the documented keys.
        const Json j = s.toJson();
        for (const char* key : {"nodes", "ops", "inputs", "outputs", "parameters", "unsupported_ops", "warnings"})
          if (!j.find(key)) failures << path + ": JSON lacks " + key;
      } catch (const std::exception& e) {
        failures << path + ": " + e.what();
      }
    }
    qInfo("%d models inspected, %d failures", count, int(failures.size()));
    QVERIFY2(failures.isEmpty(), qPrintable(failures.join("\n")));
    QVERIFY(count > 250);
  }

  void lightModelsInferExpectedOutputShapes() {
    QDirIterator it(modelsDir() + "/cnn", {"light_*_output_0.pb"}, QDir::Files);
    int checked = 0;
    while (it.hasNext()) {
      const QString pb = it.next();
      const QString model = QString(pb).replace("_output_0.pb", ".onnx");
      LoadedModel lm = loadModel(model.toStdString());
      NamedTensor expected = readTensorFile(pb.toStdString());
      const ValueType& got = lm.model->graph->outputs()[0]->type();
      QCOMPARE(got.dtype, expected.tensor.dtype());
      QVERIFY2(got.shape == Shape::ofStatic(expected.tensor.dims()),
               qPrintable(model + ": inferred " + QString::fromStdString(got.toString())));
      ++checked;
    }
    QCOMPARE(checked, 9);
  }

  void gpt2PastKeepsSymbolicDims() {
    LoadedModel lm = loadModel((modelsDir() + "/transformer/gpt2_past.onnx").toStdString());
    QCOMPARE(lm.model->graph->numNodesRecursive(), size_t(3069));
    // Every output has a known rank; batch stays symbolic.
    for (const Value* v : lm.model->graph->outputs()) {
      QVERIFY2(v->type().shape.rankKnown(), v->name().c_str());
    }
    QVERIFY(QString::fromStdString(lm.model->graph->outputs()[0]->type().toString()).contains("batch_size"));
  }

  // Stage 1 reaches at least ONNX Runtime's "basic" level (constant folding + redundant-node elimination) on the
  // three models measured with it: gpt2_past 1,390, bert_toy_optimized 297, light_resnet50 123.
  void stage1MatchesOrtBasic_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<int>("ortBasic");
    QTest::addColumn<bool>("allRanksKnown");
    QTest::newRow("gpt2_past") << "transformer/gpt2_past.onnx" << 1390 << true;
    QTest::newRow("bert_toy_optimized") << "transformer/bert_toy_optimized.onnx" << 297 << false;
    QTest::newRow("light_resnet50") << "cnn/light_resnet50.onnx" << 123 << true;
  }
  void stage1MatchesOrtBasic() {
    QFETCH(QString, model);
    QFETCH(int, ortBasic);
    QFETCH(bool, allRanksKnown);
    LoadedModel lm = loadModel((modelsDir() + "/" + model).toStdString());
    // Symbolic shape arithmetic keeps every value's rank known (the precondition for folding shape chains).
    if (allRanksKnown)
      lm.model->graph->forEachGraph([](const Graph& g) {
      for (const Value* v : g.values())
        if (v->producer()) QVERIFY2(v->type().shape.rankKnown(), v->name().c_str());
    });
    PassManager pm;
    Options o;
    addStandardPasses(pm, o);
    pm.setUntil("GraphFusion");  // rewrites only: the later Stage 2 passes add the Casts and TransData an NPU needs
    const RunSummary s = pm.run(*lm.model, o);
    QCOMPARE(s.status, RunStatus::Stopped);
    qInfo("%s: %lld -> %lld nodes (ORT basic %d)", qPrintable(model), static_cast<long long>(s.nodesBefore),
          static_cast<long long>(s.nodesAfter), ortBasic);
    QVERIFY(s.nodesAfter <= ortBasic);
  }

  void externalDataModelLoads() {
    LoadedModel lm = loadModel((modelsDir() + "/transformer/tiny_llama_fp16/model.onnx").toStdString());
    int64_t bytes = 0;
    for (const Value* v : lm.model->graph->initializers()) bytes += static_cast<int64_t>(v->constant()->byteSize());
    QVERIFY(bytes > 0);
    for (const auto& w : lm.warnings) QVERIFY2(!QString::fromStdString(w).contains("doesn't exist"), w.c_str());
  }

  void subgraphModelLoads() {
    LoadedModel lm = loadModel((modelsDir() + "/speech/silero_vad_v4.onnx").toStdString());
    QCOMPARE(lm.model->graph->numNodesRecursive(), size_t(250));
    QVERIFY(lm.inference.unknownOps.empty());
  }

  void everyModelCompilesStage1() {
    int count = 0;
    QStringList failures;
    int64_t before = 0, after = 0;
    QDirIterator it(modelsDir(), {"*.onnx"}, QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext()) {
      const QString path = it.next();
      LoadedModel lm = loadModel(path.toStdString());
      const auto problemsBefore = verifyModel(*lm.model);  // a few files break libonnx 1.12's type rules already
      PassManager pm;
      Options o;
      addStandardPasses(pm, o);
      const RunSummary s = pm.run(*lm.model, o);
      ++count;
      before += s.nodesBefore;
      after += s.nodesAfter;
      // A failure must name the pass and the reason; none is expected on the shared corpus.
      if (s.status != RunStatus::Ok) failures << path + ": " + QString::fromStdString(s.error);
      // Every reuse of the arena across streams waits for the bytes' last reader (an event path).
      if (s.status == RunStatus::Ok && !memory::unorderedReuses(*lm.model->graph).empty())
        failures << path + ": a block is reused on another stream before its last reader is known to have finished";
      for (const auto& p : verifyModel(*lm.model))
        if (std::find(problemsBefore.begin(), problemsBefore.end(), p) == problemsBefore.end())
          failures << path + ": invalid after Stage 1: " + QString::fromStdString(p);
    }
    qInfo("%d models through Stage 1: %lld nodes -> %lld", count, static_cast<long long>(before),
          static_cast<long long>(after));
    QVERIFY2(failures.isEmpty(), qPrintable(failures.join("\n")));
  }

  void omLoads() {
    // The .om reader's own checks are in tests/io/test_om_shared.cpp; here: the loader opens it like any model.
    const QString om = modelsDir() + "/om/a3c_pong_model.om";
    const LoadedModel lm = loadModel(om.toStdString());
    QVERIFY(lm.model->graph->numNodes() > 0);
  }
};

QTEST_GUILESS_MAIN(CorpusTest)
#include "test_corpus.moc"
