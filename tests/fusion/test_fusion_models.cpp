// The built-in fusion rules on whole models through the standard pipeline (Stage 1 then GraphFusion): the
// generated samples (bert-base, resnet50, mobilenetv2, llama; no ../shared needed) against the counts ONNX Runtime
// reaches, and real exports from ../shared/models (skipped with a message when absent).
#include <QFileInfo>
#include <QtTest>

#include "io/model_loader.h"
#include "ir/graph.h"
#include "ir/model.h"
#include "passes/options.h"
#include "passes/pass_manager.h"
#include "samples/sample_models.h"
#include "support/pass_test_support.h"

using namespace kiln;
using kiln::testing::problems;

namespace {

struct Compiled {
  RunSummary summary;
  std::map<std::string, int64_t> fusions;  // GraphFusion's counters: matches per rule
  int64_t stage1Nodes = 0;
};

Compiled compile(Model& m, const Options& o = Options()) {
  PassManager pm;
  addStandardPasses(pm, o);
  Compiled c;
  c.summary = pm.run(m, o);
  for (const PassRecord& r : c.summary.passes) {
    if (r.name == "GraphFusion") {
      c.fusions = r.counters;
      c.stage1Nodes = r.nodesBefore;
    }
  }
  return c;
}

int64_t fused(const Compiled& c, const std::string& rule) {
  auto it = c.fusions.find(rule);
  return it == c.fusions.end() ? 0 : it->second;
}

int count(const Model& m, const std::string& qualifiedType) {
  int n = 0;
  m.graph->forEachGraph([&](const Graph& g) {
    for (const Node* x : g.nodes()) n += x->qualifiedType() == qualifiedType;
  });
  return n;
}

void report(const char* model, const Compiled& c) {
  QStringList rules;
  for (const auto& [k, v] : c.fusions) rules << QString("%1=%2").arg(QString::fromStdString(k)).arg(v);
  qInfo("%s: %lld nodes imported, %lld after Stage 1, %lld after Stage 2; %s", model,
        static_cast<long long>(c.summary.nodesBefore), static_cast<long long>(c.stage1Nodes),
        static_cast<long long>(c.summary.nodesAfter), qPrintable(rules.join(", ")));
}

std::unique_ptr<Model> sample(const std::string& name, int layers = 0, bool weights = true) {
  SampleOptions so;
  so.layers = layers;
  so.weights = weights;
  return buildSample(name, so);
}

QString sharedModel(const char* path) { return QStringLiteral(KILN_SHARED_DIR) + "/models/" + path; }

}  // namespace

class FusionModelsTest : public QObject {
  Q_OBJECT
 private slots:
  void bertBase() {
    auto m = sample("bert-base");
    const Compiled c = compile(*m);
    report("bert-base", c);
    QCOMPARE(c.summary.status, RunStatus::Ok);
    // Per layer: two residual Adds into LayerNorm and one MatMul+bias+GELU (ONNX Runtime: 24 SkipLayerNorm, 12
    // FastGelu on BERT-base). The embeddings' Add+LayerNorm fuses as well; ORT folds that one into its
    // EmbedLayerNormalization instead.
    int encoderAddNorms = 0;
    for (const Node* n : m->graph->nodes())
      if (n->qualifiedType() == "kiln:AddLayerNorm" && n->name().find("embeddings") == std::string::npos)
        ++encoderAddNorms;
    QCOMPARE(encoderAddNorms, 24);
    QCOMPARE(fused(c, "AddLayerNormFusion"), 25);
    QCOMPARE(fused(c, "LayerNormFusion"), 25);
    QCOMPARE(fused(c, "MatMulAddGeluFusion"), 12);
    QCOMPARE(fused(c, "GeluFusion"), 0);
    QCOMPARE(count(*m, "Erf"), 0);
    QCOMPARE(count(*m, "ReduceMean"), 0);
    // Q, K, V, attention output, FFN output: the other five biased MatMuls per layer.
    QCOMPARE(fused(c, "MatMulBiasAddFusion"), 12 * 5);
    QCOMPARE(problems(*m), QString());
  }

  void resnet50() {
    auto m = sample("resnet50");
    const int convs = count(*m, "Conv");
    const Compiled c = compile(*m);
    report("resnet50", c);
    QCOMPARE(c.summary.status, RunStatus::Ok);
    QCOMPARE(count(*m, "BatchNormalization"), 0);
    QCOMPARE(fused(c, "ConvBatchNormFusion"), convs);
    // Every Relu joins a Conv: 33 directly, 16 after the residual Add (as ORT's FusedConv with Z).
    QCOMPARE(count(*m, "Relu"), 0);
    QCOMPARE(count(*m, "Add"), 0);
    QCOMPARE(fused(c, "ConvActivationFusion"), 49);
    QCOMPARE(count(*m, "Conv") + count(*m, "kiln:FusedConv"), convs);
    QVERIFY2(c.summary.nodesAfter <= 58, qPrintable(QString::number(c.summary.nodesAfter)));  // ORT: 175 -> 58
    QCOMPARE(problems(*m), QString());
  }

  void mobilenetv2() {
    auto m = sample("mobilenetv2");
    const int clips = count(*m, "Clip");
    QVERIFY(clips > 0);
    const Compiled c = compile(*m);
    report("mobilenetv2", c);
    QCOMPARE(c.summary.status, RunStatus::Ok);
    QCOMPARE(count(*m, "BatchNormalization"), 0);
    QCOMPARE(count(*m, "Clip"), 0);
    QCOMPARE(fused(c, "ConvActivationFusion"), clips);
    int relu6 = 0;
    for (const Node* n : m->graph->nodes()) relu6 += n->attrString("activation", "") == "Relu6";
    QCOMPARE(relu6, clips);
    QCOMPARE(problems(*m), QString());
  }

  void llama() {
    // Without weights the RmsNorm gammas are graph inputs (they stay a separate Mul), which does not matter here.
    auto m = sample("llama", 2, false);
    const Compiled c = compile(*m);
    report("llama (2 layers)", c);
    QCOMPARE(c.summary.status, RunStatus::Ok);
    QCOMPARE(fused(c, "RmsNormFusion"), 5);
    // Every RmsNorm but the first (which reads the embeddings) follows a residual Add.
    QCOMPARE(fused(c, "AddRmsNormFusion"), 4);
    int withSum = 0;
    for (const Node* n : m->graph->nodes())
      if (n->qualifiedType() == "kiln:AddRmsNorm") withSum += n->numOutputs() == 2;
    QCOMPARE(withSum, 3);  // the residual stream goes on after every norm but the last
    QCOMPARE(problems(*m), QString());
  }

  void bertToyOptimized() {
    const QString path = sharedModel("transformer/bert_toy_optimized.onnx");
    if (!QFileInfo::exists(path)) QSKIP(qPrintable(path + " is absent (../shared/models)"));
    LoadedModel lm = loadModel(path.toStdString());
    Model& m = *lm.model;
    const int erfs = count(m, "Erf");
    QVERIFY(erfs > 0);
    const Compiled c = compile(m);
    report("bert_toy_optimized", c);
    QCOMPARE(c.summary.status, RunStatus::Ok);
    // Every written-out GELU and LayerNorm is gone.
    QCOMPARE(count(m, "Erf"), 0);
    QCOMPARE(count(m, "ReduceMean"), 0);
    QCOMPARE(count(m, "Sqrt"), 0);
    QCOMPARE(fused(c, "MatMulAddGeluFusion") + fused(c, "GeluFusion"), erfs);
    QVERIFY(fused(c, "AddLayerNormFusion") > 0);
    QCOMPARE(problems(m), QString());
  }

  void lightResnet50() {
    const QString path = sharedModel("cnn/light_resnet50.onnx");
    if (!QFileInfo::exists(path)) QSKIP(qPrintable(path + " is absent (../shared/models)"));
    LoadedModel lm = loadModel(path.toStdString());
    Model& m = *lm.model;
    const int bns = count(m, "BatchNormalization");
    const Compiled c = compile(m);
    report("light_resnet50", c);
    QCOMPARE(c.summary.status, RunStatus::Ok);
    QCOMPARE(count(m, "BatchNormalization"), 0);
    QCOMPARE(fused(c, "ConvBatchNormFusion"), bns);
    QCOMPARE(count(m, "Relu"), 0);
    QCOMPARE(problems(m), QString());
  }
};

QTEST_GUILESS_MAIN(FusionModelsTest)
#include "test_fusion_models.moc"
