// The softmax-based fusion rules: AttentionFusion (hand-built blocks in every scale/key/mask form, checked against
// the reference kernels for the attributes it records; the generated BERT-base; what it must refuse),
// SoftmaxDropoutFusion (only a live Dropout) and BiasSoftmaxFusion (only a bias that broadcasts into x, last axis).
#include <QtTest>
#include <cmath>

#include "kernels/kernel.h"
#include "ir/fused_node.h"
#include "fusion/rules/builtin_rules.h"
#include "ir/graph.h"
#include "ir/model.h"
#include "ir/opdefs/shape_inference.h"
#include "fusion/graph_fusion_pass.h"
#include "samples/sample_models.h"
#include "support/graph_eval.h"
#include "support/pass_test_support.h"

using namespace kiln;
using kiln::testing::counter;
using kiln::testing::f32;
using kiln::testing::floats;
using kiln::testing::pattern;
using kiln::testing::problems;

namespace {

using Dims = std::vector<int64_t>;
constexpr int64_t kB = 2, kS = 3, kH = 2, kD = 4;


PassResult runFusion(Model& m) { return testing::runPass(*makeGraphFusionPass(builtinFusionRules()), m); }

Node* onlyNodeOfType(const Graph& g, const std::string& qualifiedType) {
  Node* found = nullptr;
  for (Node* n : g.nodes())
    if (n->qualifiedType() == qualifiedType) found = n;
  return found;
}

enum class KeyForm { OneTranspose, TwoTransposes };
enum class ScaleForm { DivScores, MulQuery, MulBoth, None };
enum class MaskForm { None, Add, Where };  // Add: additive [2,1,1,3]; Where: masked_fill(cond [2,1,1,3], -1e4)
constexpr double kFill = -1e4;

// Q, K, V [2,3,8] (graph inputs) -> 2 heads of 4 -> attention [-> + mask [2,1,1,3]] -> [2,3,8]
struct AttentionGraph {
  std::unique_ptr<Model> m = std::make_unique<Model>();
  Value *q = nullptr, *k = nullptr, *v = nullptr, *mask = nullptr, *scores = nullptr;
  MaskForm maskForm;
  AttentionGraph(KeyForm key, ScaleForm scale, MaskForm maskKind) : maskForm(maskKind) {
    m->opsets[""] = 17;
    Graph& g = *m->graph;
    q = g.addInput("q", f32({kB, kS, kH * kD}));
    k = g.addInput("k", f32({kB, kS, kH * kD}));
    v = g.addInput("v", f32({kB, kS, kH * kD}));
    if (maskForm == MaskForm::Add) mask = g.addInput("mask", f32({kB, 1, 1, kS}));
    if (maskForm == MaskForm::Where)
      mask = g.addInput("masked", ValueType::tensor(DType::Bool, Shape::ofStatic({kB, 1, 1, kS})));
    Value* split = g.addInitializer("split", Tensor::fromVector(DType::Int64, {4}, std::vector<int64_t>{0, 0, kH, kD}));
    auto heads = [&](Value* x, const std::vector<int64_t>& perm, const char* name) {
      Node* r = g.addNode("Reshape", {x, split}, {std::string(name) + "_split"});
      Node* t = g.addNode("Transpose", {r->output(0)}, {std::string(name) + "_heads"});
      t->setAttr("perm", Attribute(perm));
      return t->output(0);
    };
    Value* qh = heads(q, {0, 2, 1, 3}, "q");
    Value* kt = nullptr;
    if (key == KeyForm::OneTranspose) {
      kt = heads(k, {0, 2, 3, 1}, "k");
    } else {
      Node* t = g.addNode("Transpose", {heads(k, {0, 2, 1, 3}, "k")}, {"k_t"});
      t->setAttr("perm", Attribute(std::vector<int64_t>{0, 1, 3, 2}));
      kt = t->output(0);
    }
    const double rootD = std::sqrt(double(kD));
    if (scale == ScaleForm::MulQuery)
      qh = g.addNode("Mul", {qh, g.addInitializer("inv_sqrt_d", floats({}, {1.0 / rootD}))}, {"q_scaled"})->output(0);
    if (scale == ScaleForm::MulBoth) {  // 1/⁴√D on each side, as some exporters split it
      Value* s = g.addInitializer("inv_4th_root_d", floats({1}, {1.0 / std::sqrt(rootD)}));
      qh = g.addNode("Mul", {qh, s}, {"q_scaled"})->output(0);
      kt = g.addNode("Mul", {s, kt}, {"k_scaled"})->output(0);
    }
    Value* s = g.addNode("MatMul", {qh, kt}, {"scores"})->output(0);
    scores = s;
    if (scale == ScaleForm::DivScores)
      s = g.addNode("Div", {s, g.addInitializer("sqrt_d", floats({}, {rootD}))}, {"scaled"})->output(0);
    if (maskForm == MaskForm::Add) s = g.addNode("Add", {mask, s}, {"masked_scores"})->output(0);
    if (maskForm == MaskForm::Where)
      s = g.addNode("Where", {mask, g.addInitializer("fill", floats({}, {kFill})), s}, {"filled"})->output(0);
    Node* softmax = g.addNode("Softmax", {s}, {"probs"});
    softmax->setAttr("axis", Attribute(int64_t{-1}));
    Value* ctx = g.addNode("MatMul", {softmax->output(0), heads(v, {0, 2, 1, 3}, "v")}, {"context"})->output(0);
    Node* back = g.addNode("Transpose", {ctx}, {"context_t"});
    back->setAttr("perm", Attribute(std::vector<int64_t>{0, 2, 1, 3}));
    Value* merge = g.addInitializer("merge", Tensor::fromVector(DType::Int64, {3}, std::vector<int64_t>{0, 0, -1}));
    g.addOutput(g.addNode("Reshape", {back->output(0), merge}, {"y"}, "merge")->output(0));
    inferShapes(*m);
  }
  std::vector<Tensor> inputs() const {
    std::vector<Tensor> in{pattern({kB, kS, kH * kD}, 1), pattern({kB, kS, kH * kD}, 2), pattern({kB, kS, kH * kD}, 3)};
    if (maskForm == MaskForm::Add) in.push_back(floats({kB, 1, 1, kS}, {0, 0, -10000, 0, -10000, -10000}));
    if (maskForm == MaskForm::Where)
      in.push_back(Tensor::fromVector(DType::Bool, {kB, 1, 1, kS}, std::vector<uint8_t>{0, 1, 0, 1, 1, 0}));
    return in;
  }
};

// What kiln:Attention means, written out: per batch and head, softmax(q·kᵀ·scale + mask)·v; a bool mask sets the
// masked scores to `fill` instead.
std::vector<double> referenceAttention(const std::vector<Tensor>& in, int64_t heads, double scale, double fill) {
  const auto q = in[0].toDouble(), k = in[1].toDouble(), v = in[2].toDouble();
  const bool boolMask = in.size() > 3 && in[3].dtype() == DType::Bool;
  const std::vector<double> mask = in.size() > 3 ? in[3].toDouble() : std::vector<double>(kB * kS, 0.0);
  const int64_t hidden = heads * kD;
  std::vector<double> y(static_cast<size_t>(kB * kS * hidden));
  for (int64_t b = 0; b < kB; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < kS; ++i) {
        std::vector<double> p(kS);
        double top = -INFINITY, sum = 0;
        for (int64_t j = 0; j < kS; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < kD; ++d)
            dot += q[(b * kS + i) * hidden + h * kD + d] * k[(b * kS + j) * hidden + h * kD + d];
          p[j] = boolMask ? (mask[b * kS + j] != 0 ? fill : dot * scale) : dot * scale + mask[b * kS + j];
          top = std::max(top, p[j]);
        }
        for (double& e : p) sum += (e = std::exp(e - top));
        for (int64_t d = 0; d < kD; ++d) {
          double acc = 0;
          for (int64_t j = 0; j < kS; ++j) acc += p[j] / sum * v[(b * kS + j) * hidden + h * kD + d];
          y[(b * kS + i) * hidden + h * kD + d] = acc;
        }
      }
  return y;
}

// x [2,4,8] -> Softmax(axis) -> Dropout(ratio, training_mode?) -> y
std::unique_ptr<Model> softmaxDropout(const Value** maskOut, bool training, bool maskRead) {
  auto m = std::make_unique<Model>();
  m->opsets[""] = 17;
  Graph& g = *m->graph;
  Value* x = g.addInput("x", f32({2, 4, 8}));
  Node* softmax = g.addNode("Softmax", {x}, {"p"});
  std::vector<Value*> in{softmax->output(0), g.addInitializer("ratio", floats({}, {0.1}))};
  if (training)
    in.push_back(g.addInitializer("training", Tensor::fromVector(DType::Bool, {}, std::vector<uint8_t>{1})));
  Node* dropout = g.addNode("Dropout", in, {"y", "drop_mask"});
  dropout->setAttr("seed", Attribute(int64_t{7}));
  g.addOutput(dropout->output(0));
  if (maskRead) g.addOutput(dropout->output(1));
  if (maskOut) *maskOut = dropout->output(1);
  inferShapes(*m);
  return m;
}

// x [2,4,8] + bias -> Softmax(axis) -> y
std::unique_ptr<Model> biasSoftmax(const Dims& xDims, const Dims& biasDims, int64_t axis) {
  auto m = std::make_unique<Model>();
  m->opsets[""] = 17;
  Graph& g = *m->graph;
  Value* x = g.addInput("x", f32(xDims));
  Value* bias = g.addInput("bias", f32(biasDims));
  Node* add = g.addNode("Add", {bias, x}, {"sum"});
  Node* softmax = g.addNode("Softmax", {add->output(0)}, {"y"});
  softmax->setAttr("axis", Attribute(axis));
  g.addOutput(softmax->output(0));
  inferShapes(*m);
  return m;
}

}  // namespace

class SoftmaxFusionsTest : public QObject {
  Q_OBJECT
 private slots:
  void attentionFusesEveryForm_data() {
    QTest::addColumn<int>("key");
    QTest::addColumn<int>("scale");
    QTest::addColumn<int>("mask");
    QTest::addColumn<double>("expectedScale");
    const double inv = 1.0 / std::sqrt(double(kD));
    const int oneT = int(KeyForm::OneTranspose), twoT = int(KeyForm::TwoTransposes);
    const int add = int(MaskForm::Add), none = int(MaskForm::None), where = int(MaskForm::Where);
    QTest::newRow("Kᵀ by one Transpose, Div on the scores, mask") << oneT << int(ScaleForm::DivScores) << add << inv;
    QTest::newRow("Kᵀ by two Transposes, Mul on Q, no mask") << twoT << int(ScaleForm::MulQuery) << none << inv;
    QTest::newRow("scale split over Q and Kᵀ, mask") << twoT << int(ScaleForm::MulBoth) << add << inv;
    QTest::newRow("no scale, mask") << oneT << int(ScaleForm::None) << add << 1.0;
    QTest::newRow("DistilBERT: scaled Q, masked_fill by Where") << oneT << int(ScaleForm::MulQuery) << where << inv;
  }
  void attentionFusesEveryForm() {
    QFETCH(int, key);
    QFETCH(int, scale);
    QFETCH(int, mask);
    QFETCH(double, expectedScale);
    AttentionGraph t{KeyForm(key), ScaleForm(scale), MaskForm(mask)};
    Graph& g = *t.m->graph;
    const std::vector<Tensor> in = t.inputs();
    const std::vector<Tensor> before = testing::evaluateGraph(g, in);
    QCOMPARE(before.size(), size_t(1));
    const size_t nodesBefore = g.numNodes();

    QCOMPARE(counter(runFusion(*t.m), "AttentionFusion"), 1);
    QCOMPARE(problems(*t.m), QString());
    QCOMPARE(g.numNodes(), size_t(1));
    Node* att = *g.nodes().begin();
    QCOMPARE(att->qualifiedType(), std::string("kiln:Attention"));
    QCOMPARE(replacedNodeIds(*att).size(), nodesBefore);
    std::vector<Value*> want{t.q, t.k, t.v};
    if (t.mask) want.push_back(t.mask);
    QCOMPARE(att->inputs(), want);
    QCOMPARE(att->attrInt("num_heads", 0), kH);
    QVERIFY(std::abs(att->attrFloat("scale", 0) - expectedScale) < 1e-6);
    QCOMPARE(att->output(0)->type().shape, Shape::ofStatic({kB, kS, kH * kD}));
    QCOMPARE(att->output(0)->name(), std::string("y"));
    // The Reshape targets and scale constants went with the nodes that read them.
    QCOMPARE(g.initializers().size(), size_t(0));
    // Scores and probabilities [2,2,3,3] fp32 = 144 B each, written once and read once, are among the savings.
    QVERIFY(std::stoll(att->annotation("fusion.hbm_bytes_saved")) >= 4 * 144);
    // The recorded attributes mean what the graph computed.
    if (t.maskForm == MaskForm::Where) QCOMPARE(att->attrFloat("mask_filter_value", 0), float(kFill));
    QCOMPARE(att->attr("mask_filter_value") != nullptr, t.maskForm == MaskForm::Where);
    const std::vector<double> got = referenceAttention(in, att->attrInt("num_heads", 0), att->attrFloat("scale", 0),
                                                       att->attrFloat("mask_filter_value", 0));
    const std::vector<double> expected = before[0].toDouble();
    QCOMPARE(got.size(), expected.size());
    for (size_t i = 0; i < got.size(); ++i)
      QVERIFY2(std::abs(got[i] - expected[i]) < 1e-5, qPrintable(QString::number(i)));
  }

  void attentionRefusesWhatItCannotProve() {
    {  // the scores are also read elsewhere: they must stay
      AttentionGraph t(KeyForm::OneTranspose, ScaleForm::DivScores, MaskForm::Add);
      t.m->graph->addOutput(t.scores);
      QCOMPARE(counter(runFusion(*t.m), "AttentionFusion"), 0);
      QCOMPARE(problems(*t.m), QString());
    }
    {  // unknown batch: the head split keeps "some" batch, but not provably the projection's
      AttentionGraph t(KeyForm::OneTranspose, ScaleForm::DivScores, MaskForm::None);
      for (Value* in : {t.q, t.k, t.v}) {
        ValueType vt = in->type();
        vt.shape.dims()[0] = Dim::unknown();
        in->setType(vt);
      }
      inferShapes(*t.m);
      QCOMPARE(counter(runFusion(*t.m), "AttentionFusion"), 0);
    }
    {  // softmax over the heads axis is not attention
      AttentionGraph t(KeyForm::OneTranspose, ScaleForm::None, MaskForm::None);
      for (Node* n : t.m->graph->nodes())
        if (n->opType() == "Softmax") n->setAttr("axis", Attribute(int64_t{1}));
      QCOMPARE(counter(runFusion(*t.m), "AttentionFusion"), 0);
    }
  }

  void attentionInTheGeneratedBertBase() {
    // ONNX Runtime fuses 12 attention blocks in BERT-base; our export-shaped sample must give the same 12.
    SampleOptions so;
    so.weights = false;
    auto m = buildSample("bert-base", so);
    inferShapes(*m);
    const PassResult r = runFusion(*m);
    QCOMPARE(counter(r, "AttentionFusion"), 12);
    QCOMPARE(problems(*m), QString());
    int seen = 0;
    for (Node* n : m->graph->nodes())
      if (n->qualifiedType() == "kiln:Attention") {
        ++seen;
        QCOMPARE(n->attrInt("num_heads", 0), int64_t(12));
        QVERIFY(std::abs(n->attrFloat("scale", 0) - 0.125f) < 1e-7f);
        QCOMPARE(n->numInputs(), size_t(4));  // the (1 - mask) · -10000 mask, computed outside
        QCOMPARE(n->input(3)->producer()->opType(), std::string("Mul"));
        QCOMPARE(n->output(0)->type().shape.toString(), std::string("batch×sequence×768"));
      }
    QCOMPARE(seen, 12);
    // No Softmax, Transpose or head Reshape is left behind.
    for (Node* n : m->graph->nodes())
      QVERIFY2(n->opType() != "Softmax" && n->opType() != "Transpose", n->name().c_str());
  }

  void softmaxDropoutFusesOnlyALiveDropout() {
    {  // training: the dropout happens, so it fuses with its seed, ratio and training_mode
      auto m = softmaxDropout(nullptr, true, false);
      QCOMPARE(counter(runFusion(*m), "SoftmaxDropoutFusion"), 1);
      Node* fused = onlyNodeOfType(*m->graph, "kiln:SoftmaxDropout");
      QVERIFY(fused);
      QCOMPARE(m->graph->numNodes(), size_t(1));
      QCOMPARE(fused->numInputs(), size_t(3));
      QCOMPARE(fused->numOutputs(), size_t(1));
      QCOMPARE(fused->attrInt("axis", -1), int64_t(2));
      QCOMPARE(fused->attrInt("seed", 0), int64_t(7));
      QCOMPARE(problems(*m), QString());
    }
    {  // the mask is read: both outputs move to the fused node
      const Value* mask = nullptr;
      auto m = softmaxDropout(&mask, false, true);
      QCOMPARE(counter(runFusion(*m), "SoftmaxDropoutFusion"), 1);
      Node* fused = onlyNodeOfType(*m->graph, "kiln:SoftmaxDropout");
      QCOMPARE(fused->numOutputs(), size_t(2));
      QVERIFY(fused->output(1)->isGraphOutput());
      QCOMPARE(fused->output(1)->type().dtype, DType::Bool);
      QCOMPARE(problems(*m), QString());
    }
    {  // inference: the Dropout is NoOpRemoval's, not ours
      auto m = softmaxDropout(nullptr, false, false);
      QCOMPARE(counter(runFusion(*m), "SoftmaxDropoutFusion"), 0);
    }
  }

  void biasSoftmaxFusesBroadcastBias_data() {
    QTest::addColumn<QList<qlonglong>>("x");
    QTest::addColumn<QList<qlonglong>>("bias");
    QTest::addColumn<int>("axis");
    QTest::addColumn<int>("fused");
    QTest::newRow("bias [1,1,8]") << QList<qlonglong>{2, 4, 8} << QList<qlonglong>{1, 1, 8} << -1 << 1;
    QTest::newRow("bias [2,1,8] (middle ones)") << QList<qlonglong>{2, 4, 8} << QList<qlonglong>{2, 1, 8} << 2 << 1;
    QTest::newRow("same shape") << QList<qlonglong>{2, 4, 8} << QList<qlonglong>{2, 4, 8} << -1 << 1;
    QTest::newRow("softmax over axis 1") << QList<qlonglong>{2, 4, 8} << QList<qlonglong>{1, 1, 8} << 1 << 0;
    QTest::newRow("outer product [2,4,1] + [1,1,8]") << QList<qlonglong>{2, 4, 1} << QList<qlonglong>{1, 1, 8} << -1
                                                     << 0;
  }
  void biasSoftmaxFusesBroadcastBias() {
    QFETCH(QList<qlonglong>, x);
    QFETCH(QList<qlonglong>, bias);
    QFETCH(int, axis);
    QFETCH(int, fused);
    auto m = biasSoftmax(Dims(x.begin(), x.end()), Dims(bias.begin(), bias.end()), axis);
    const std::vector<Tensor> in{pattern(Dims(x.begin(), x.end()), 1), pattern(Dims(bias.begin(), bias.end()), 2)};
    if (!fused) {
      QCOMPARE(counter(runFusion(*m), "BiasSoftmaxFusion"), 0);
      QCOMPARE(m->graph->numNodes(), size_t(2));
      return;
    }
    const Tensor expected = testing::evaluateGraph(*m->graph, in).at(0);
    QCOMPARE(counter(runFusion(*m), "BiasSoftmaxFusion"), 1);
    QCOMPARE(problems(*m), QString());
    Node* n = onlyNodeOfType(*m->graph, "kiln:BiasSoftmax");
    // x is the input with the sum's shape; with equal shapes either may be called the bias (Add commutes).
    const std::string first = n->input(0)->name(), second = n->input(1)->name();
    QVERIFY((first == "x" && second == "bias") || (x == bias && first == "bias" && second == "x"));
    QCOMPARE(n->attrInt("axis", 0), int64_t(2));
    // Softmax(x + bias) over the recorded axis, by the reference kernels, is what the graph computed.
    auto check = std::make_unique<Model>();
    check->opsets[""] = 17;
    Graph& g = *check->graph;
    Node* add = g.addNode("Add", {g.addInput("x", f32(Dims(x.begin(), x.end()))),
                                  g.addInput("b", f32(Dims(bias.begin(), bias.end())))}, {"s"});
    Node* sm = g.addNode("Softmax", {add->output(0)}, {"y"});
    sm->setAttr("axis", Attribute(n->attrInt("axis", 0)));
    g.addOutput(sm->output(0));
    QVERIFY(testing::maxAbsDiff(testing::evaluateGraph(g, in).at(0), expected) < 1e-7);
  }
};

QTEST_GUILESS_MAIN(SoftmaxFusionsTest)
#include "test_softmax_fusions.moc"
