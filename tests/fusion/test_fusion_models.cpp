// The built-in fusion rules on whole models through the standard pipeline (counted after GraphFusion): the
// generated samples (bert-base, resnet50, mobilenetv2, llama; no ../shared needed) against the counts ONNX Runtime
// reaches, and real exports from ../shared/models (skipped with a message when absent).
#include <QFileInfo>
#include <QtTest>

#include "io/model_loader.h"
#include "ir/graph.h"
#include "ir/model.h"
#include "options/options.h"
#include "passes/pass_manager.h"
#include "pipeline/standard_pipeline.h"
#include "samples/sample_models.h"
#include "support/pass_test_support.h"

using namespace kiln;
using kiln::testing::problems;

namespace {

struct Compiled {
  RunSummary summary;
  std::map<std::string, int64_t> fusions;  // GraphFusion's counters: matches per rule
  int64_t stage1Nodes = 0;
  int64_t fusedNodes = 0;  // after GraphFusion, before precision and formats add Casts and TransData
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
      c.fusedNodes = r.nodesAfter;
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
  qInfo("%s: %lld nodes imported, %lld after Stage 1, %lld after GraphFusion, %lld after Stage 2; %s", model,
        static_cast<long long>(c.summary.nodesBefore), static_cast<long long>(c.stage1Nodes),
        static_cast<long long>(c.fusedNodes), static_cast<long long>(c.summary.nodesAfter),
        qPrintable(rules.join(", ")));
}

std::unique_ptr<Model> sample(const std::string& name, int layers = 0, bool weights = true) {
  SampleOptions so;
  so.layers = layers;
  so.weights = weights;
  return buildSample(name, so);
}

// The model at ../shared/models/`path`, or null when it is absent (the caller skips).
std::unique_ptr<Model> loadShared(const QString& path) {
  const QString full = QStringLiteral(KILN_SHARED_DIR) + "/models/" + path;
  if (!QFileInfo::exists(full)) return nullptr;
  return std::move(loadModel(full.toStdString()).model);
}

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
    // The classifier (Flatten + Gemm on the pooled [1, 2048, 1, 1]) is one more: a 1x1 convolution, as GE runs it.
    QCOMPARE(fused(c, "FlattenGemmFusion"), 1);
    QCOMPARE(count(*m, "Conv") + count(*m, "kiln:FusedConv"), convs + 1);
    QVERIFY2(c.fusedNodes <= 58, qPrintable(QString::number(c.fusedNodes)));  // ORT: 175 -> 58
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
    auto loaded = loadShared("transformer/bert_toy_optimized.onnx");
    if (!loaded) QSKIP("../shared/models/transformer/bert_toy_optimized.onnx is absent");
    Model& m = *loaded;
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
    auto loaded = loadShared("cnn/light_resnet50.onnx");
    if (!loaded) QSKIP("../shared/models/cnn/light_resnet50.onnx is absent");
    Model& m = *loaded;
    const int bns = count(m, "BatchNormalization");
    const Compiled c = compile(m);
    report("light_resnet50", c);
    QCOMPARE(c.summary.status, RunStatus::Ok);
    QCOMPARE(count(m, "BatchNormalization"), 0);
    QCOMPARE(fused(c, "ConvBatchNormFusion"), bns);
    QCOMPARE(count(m, "Relu"), 0);
    QCOMPARE(problems(m), QString());
  }

  // ONNX Runtime's fusion test graphs for the patterns these rules cover: a positive file must fire its rule, a
  // negative one (unsupported activation, a perm that moves batch axes, integer types...) must not.
  void ortFusionSuite_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("rule");
    QTest::addColumn<bool>("fires");
    const auto add = [](const char* file, const char* rule, bool fires) {
      QTest::newRow(file) << QString(file) << QString(rule) << fires;
    };
    for (const char* f : {"conv_relu", "conv_relu_fp16", "conv_relu_opset12", "conv_clip", "conv_clip11",
                          "conv_hardsigmoid", "conv_leakyrelu", "conv_sigmoid", "conv_tanh", "conv_with_padding_relu",
                          "conv_add_relu", "conv_add_relu_fp16"})
      add(f, "ConvActivationFusion", true);
    add("conv_softsign", "ConvActivationFusion", false);
    for (const char* f : {"fuse-conv-bn-no-bias", "fuse-conv-bn-mul-add-unsqueeze", "fuse-conv-bn-add-mul-float16",
                          "fuse-conv-bn-mul-add-unsqueeze-no-bias", "fuse-conv-bn-mul-add-unsqueeze.negative_axes"})
      add(f, "ConvBatchNormFusion", true);
    // (fast_gelu / fast_gelu_use_graph_input write the tanh form in an association GeluFusion does not know yet.)
    for (const char* f : {"gelu", "gelu_format2_0", "gelu_format2_1", "gelu_format2_1_use_graph_input", "fast_gelu2",
                          "fast_gelu2_use_graph_input"})
      add(f, "GeluFusion", true);
    for (const char* f : {"skip_layer_norm_format1", "skip_layer_norm_format2", "skip_layer_norm_format3",
                          "skip_layer_norm_format1_graph_output", "skip_layer_norm_no_beta"})
      add(f, "AddLayerNormFusion", true);
    for (const char* f : {"transpose_matmul_4d_fusion", "transpose_matmul_4d_fusion_2_transpose",
                          "transpose_matmul_4d_fusion_3_transpose", "transpose_matmul_2d_fusion_with_preserved_transpose"})
      add(f, "TransposeMatMulFusion", true);
    for (const char* f : {"transpose_matmul_4d_fusion_invalid_datatype_int32",
                          "transpose_matmul_4d_fusion_invalid_datatype_int64",
                          "transpose_matmul_4d_fusion_invalid_default_perm", "transpose_matmul_4d_fusion_invalid_perm"})
      add(f, "TransposeMatMulFusion", false);
  }
  void ortFusionSuite() {
    QFETCH(QString, file);
    QFETCH(QString, rule);
    QFETCH(bool, fires);
    auto m = loadShared("patterns/ort_fusion_suite/" + file + ".onnx");
    if (!m) QSKIP("../shared/models/patterns/ort_fusion_suite is absent");
    const QString before = problems(*m);
    const Compiled c = compile(*m);
    report(qPrintable(file), c);
    QCOMPARE(c.summary.status, RunStatus::Ok);
    QCOMPARE(fused(c, rule.toStdString()) > 0, fires);
    QVERIFY(problems(*m).isEmpty() || problems(*m) == before);
  }
};

QTEST_GUILESS_MAIN(FusionModelsTest)
#include "test_fusion_models.moc"
