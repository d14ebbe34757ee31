// The folding passes of the prepare stage: ConstantFolding (shape chains, the size cap, Constant nodes, the on/off
// switch), DimensionCompute (static vs symbolic dims, Shape's start/end), BatchNormFold on Gemm and the Stage 2
// ConvBatchNormFusion that shares its arithmetic (numerically checked against Conv/Gemm followed by BN, with and
// without bias, grouped, fp16/double, and the cases that must not fold), then the Stage 1 passes over real models
// from ../shared/models.
#include <QFileInfo>
#include <QtTest>
#include <cmath>
#include <map>

#include "kernels/kernel.h"
#include "fusion/rules/builtin_rules.h"
#include "io/model_loader.h"
#include "ir/graph.h"
#include "ir/model.h"
#include "ir/opdefs/shape_inference.h"
#include "ir/verifier.h"
#include "fusion/graph_fusion_pass.h"
#include "options/options.h"
#include "passes/prepare/batchnorm_fold.h"
#include "passes/prepare/constant_folding.h"
#include "passes/prepare/dimension_compute.h"
#include "support/pass_test_support.h"

using namespace kiln;
using kiln::testing::counter;
using kiln::testing::problems;
using kiln::testing::runPass;

namespace {

using Dims = std::vector<int64_t>;

ValueType tensorType(DType t, const Dims& dims) { return ValueType::tensor(t, Shape::ofStatic(dims)); }
Tensor i64(Dims dims, std::vector<int64_t> v) { return Tensor::fromVector(DType::Int64, std::move(dims), v); }
Tensor ofType(DType t, Dims dims, const std::vector<double>& v) {
  return convertTensor(Tensor::fromVector(DType::Double, std::move(dims), v), t);
}

std::unique_ptr<Model> newModel() {
  auto m = std::make_unique<Model>();
  m->opsets[""] = 17;
  return m;
}

std::map<std::string, int> opCounts(const Model& m) {
  std::map<std::string, int> counts;
  m.graph->forEachGraph([&](const Graph& g) {
    for (const Node* n : g.nodes()) ++counts[n->opType()];
  });
  return counts;
}

// Conv+BN folding is the Stage 2 rule ConvBatchNormFusion, run alone.
std::unique_ptr<Pass> makeConvBnFusionPass() { return makeGraphFusionPass({makeConvBatchNormFusion()}); }

// ---- a direct reference for Conv / Gemm / BN, in double ----
struct ConvSpec {
  int64_t c = 4, m = 6, group = 1, hw = 5, k = 3, pad = 1;
};

std::vector<double> conv2d(const std::vector<double>& x, const std::vector<double>& w, const std::vector<double>* b,
                           const ConvSpec& s) {
  const int64_t cg = s.c / s.group, mg = s.m / s.group, out = s.hw + 2 * s.pad - s.k + 1;
  std::vector<double> y;
  for (int64_t m = 0; m < s.m; ++m)
    for (int64_t oh = 0; oh < out; ++oh)
      for (int64_t ow = 0; ow < out; ++ow) {
        double acc = b ? (*b)[static_cast<size_t>(m)] : 0.0;
        for (int64_t c = 0; c < cg; ++c)
          for (int64_t kh = 0; kh < s.k; ++kh)
            for (int64_t kw = 0; kw < s.k; ++kw) {
              const int64_t ih = oh + kh - s.pad, iw = ow + kw - s.pad, ic = (m / mg) * cg + c;
              if (ih < 0 || iw < 0 || ih >= s.hw || iw >= s.hw) continue;
              acc += x[static_cast<size_t>((ic * s.hw + ih) * s.hw + iw)] *
                     w[static_cast<size_t>(((m * cg + c) * s.k + kh) * s.k + kw)];
            }
        y.push_back(acc);
      }
  return y;
}

struct BnParams {
  std::vector<double> gamma, beta, mean, var;
  double eps = 1e-3;
  explicit BnParams(int64_t channels) {
    for (int64_t i = 0; i < channels; ++i) {
      gamma.push_back(0.5 + 0.1 * static_cast<double>(i));
      beta.push_back(0.1 * static_cast<double>(i) - 0.2);
      mean.push_back(0.05 * static_cast<double>(i) - 0.1);
      var.push_back(0.5 + 0.2 * static_cast<double>(i));
    }
  }
  double apply(double v, size_t c) const {
    const double e = static_cast<double>(static_cast<float>(eps));  // the attribute is a float
    return gamma[c] * (v - mean[c]) / std::sqrt(var[c] + e) + beta[c];
  }
  Node* addTo(Graph& g, Value* x, DType t, const std::string& out) const {
    const Dims d{static_cast<int64_t>(gamma.size())};
    Node* bn =
        g.addNode("BatchNormalization",
                  {x, g.addInitializer("gamma", ofType(t, d, gamma)), g.addInitializer("beta", ofType(t, d, beta)),
                   g.addInitializer("mean", ofType(t, d, mean)), g.addInitializer("var", ofType(t, d, var))},
                  {out}, "bn");
    bn->setAttr("epsilon", Attribute(static_cast<float>(eps)));
    return bn;
  }
};

std::vector<double> seq(size_t n, double a, double b) {
  std::vector<double> v;
  for (size_t i = 0; i < n; ++i) v.push_back(std::sin(a * static_cast<double>(i) + b));
  return v;
}

// Builds x -> Conv(w[, b]) -> BN -> y, folds, and compares the folded Conv with Conv-then-BN on the same input.
void checkConvBnFold(const ConvSpec& s, bool withBias, DType t, double tolerance) {
  auto m = newModel();
  Graph& g = *m->graph;
  Value* x = g.addInput("x", tensorType(t, {1, s.c, s.hw, s.hw}));
  // Weights and BN parameters as the model will hold them (rounded to t), so only the fold's own rounding counts.
  const std::vector<double> w =
      ofType(t, {s.m, s.c / s.group, s.k, s.k}, seq(static_cast<size_t>(s.m * (s.c / s.group) * s.k * s.k), 0.37, 0.1))
          .toDouble();
  const std::vector<double> b = ofType(t, {s.m}, seq(static_cast<size_t>(s.m), 1.3, 0.5)).toDouble();
  std::vector<Value*> convIn{x, g.addInitializer("w", ofType(t, {s.m, s.c / s.group, s.k, s.k}, w))};
  if (withBias) convIn.push_back(g.addInitializer("b", ofType(t, {s.m}, b)));
  Node* conv = g.addNode("Conv", convIn, {"conv_out"}, "conv");
  conv->setAttr("group", Attribute(s.group));
  conv->setAttr("pads", Attribute(Dims{s.pad, s.pad, s.pad, s.pad}));
  BnParams bn(s.m);
  g.addOutput(bn.addTo(g, conv->output(0), t, "y")->output(0));
  inferShapes(*m);
  QVERIFY2(problems(*m).isEmpty(), qPrintable(problems(*m)));

  const std::vector<double> xv =
      ofType(t, {1, s.c, s.hw, s.hw}, seq(static_cast<size_t>(s.c * s.hw * s.hw), 0.11, 0.3)).toDouble();
  std::vector<double> reference = conv2d(xv, w, withBias ? &b : nullptr, s);
  const size_t plane = reference.size() / static_cast<size_t>(s.m);
  for (size_t i = 0; i < reference.size(); ++i) reference[i] = bn.apply(reference[i], i / plane);

  auto pass = makeConvBnFusionPass();
  PassResult r = runPass(*pass, *m);
  QCOMPARE(counter(r, "ConvBatchNormFusion"), int64_t{1});
  QVERIFY2(problems(*m).isEmpty(), qPrintable(problems(*m)));
  QCOMPARE(m->graph->numNodes(), size_t{1});
  Node* folded = *m->graph->nodes().begin();
  QCOMPARE(folded->opType(), std::string("Conv"));
  QCOMPARE(folded->numInputs(), size_t{3});
  QCOMPARE(m->graph->outputs()[0]->name(), std::string("y"));  // the model's output keeps its name
  QCOMPARE(m->graph->outputs()[0]->type().shape, Shape::ofStatic({1, s.m, s.hw, s.hw}));
  const Tensor* nw = folded->input(1)->constant();
  const Tensor* nb = folded->input(2)->constant();
  QVERIFY(nw && nb);
  QCOMPARE(nw->dtype(), t);
  QCOMPARE(nb->dtype(), t);
  const std::vector<double> nbv = nb->toDouble();
  const std::vector<double> got = conv2d(xv, nw->toDouble(), &nbv, s);
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i)
    worst = std::max(worst, std::fabs(got[i] - reference[i]) / std::max(1.0, std::fabs(reference[i])));
  qInfo("Conv%s group=%lld %s: max relative difference %.3g", withBias ? "+bias" : "", static_cast<long long>(s.group),
        std::string(dtypeName(t)).c_str(), worst);
  QVERIFY2(worst <= tolerance, qPrintable(QString("difference %1 above %2").arg(worst).arg(tolerance)));
  QCOMPARE(m->graph->initializers().size(), size_t{2});  // the old weights and BN parameters are gone
}

}  // namespace

class FoldingPassesTest : public QObject {
  Q_OBJECT
 private slots:
  void shapeChainFoldsToConstantReshape() {
    auto m = newModel();
    Graph& g = *m->graph;
    Value* x = g.addInput("x", tensorType(DType::Float, {2, 3, 4}));
    Node* shape = g.addNode("Shape", {x}, {"s"}, "shape");
    Node* idx = g.addNode("Constant", {}, {"idx"}, "idx");
    idx->setAttr("value_int", Attribute(int64_t{0}));
    Node* gather = g.addNode("Gather", {shape->output(0), idx->output(0)}, {"d0"}, "gather");
    Node* unsq =
        g.addNode("Unsqueeze", {gather->output(0), g.addInitializer("axes", i64({1}, {0}))}, {"u"}, "unsqueeze");
    Node* concat =
        g.addNode("Concat", {unsq->output(0), g.addInitializer("minus1", i64({1}, {-1}))}, {"shp"}, "concat");
    concat->setAttr("axis", Attribute(int64_t{0}));
    Node* reshape = g.addNode("Reshape", {x, concat->output(0)}, {"y"}, "reshape");
    g.addOutput(reshape->output(0));
    inferShapes(*m);
    QVERIFY2(problems(*m).isEmpty(), qPrintable(problems(*m)));

    auto dims = makeDimensionComputePass();
    auto fold = makeConstantFoldingPass();
    QCOMPARE(dims->name(), std::string("DimensionCompute"));
    QCOMPARE(fold->name(), std::string("ConstantFolding"));
    QCOMPARE(counter(runPass(*dims, *m), "shapes_computed"), int64_t{1});
    PassResult r = runPass(*fold, *m);
    QCOMPARE(counter(r, "folded"), int64_t{3});  // Gather, Unsqueeze, Concat
    QCOMPARE(counter(r, "constants_to_initializers"), int64_t{1});
    QVERIFY(r.changed);
    QVERIFY2(problems(*m).isEmpty(), qPrintable(problems(*m)));
    QCOMPARE(g.numNodes(), size_t{1});
    QCOMPARE(reshape->opType(), std::string("Reshape"));
    const Tensor* target = reshape->input(1)->constant();
    QVERIFY(target);
    QCOMPARE(target->toInt64(), (std::vector<int64_t>{2, -1}));
    QCOMPARE(reshape->input(1)->name(), std::string("shp"));  // named after the folded output
    QCOMPARE(g.initializers().size(), size_t{1});             // inputs the fold left unused are dropped
    QCOMPARE(reshape->output(0)->type().shape, Shape::ofStatic({2, 12}));
    // A second run finds nothing left to do.
    QVERIFY(!runPass(*fold, *m).changed);
  }

  void sizeCapSkipsLargeConstantOfShape() {
    auto m = newModel();
    Graph& g = *m->graph;
    // 2^40 bytes of fp32: far above any sane cap, and never allocated.
    Value* hugeShape = g.addInitializer("huge_shape", i64({3}, {int64_t{1} << 16, int64_t{1} << 16, 64}));
    Node* big = g.addNode("ConstantOfShape", {hugeShape}, {"big"}, "big");
    Node* bigUntyped = g.addNode("ConstantOfShape", {hugeShape}, {"big_untyped"}, "big_untyped");
    Node* small = g.addNode("ConstantOfShape", {g.addInitializer("small_shape", i64({2}, {2, 3}))}, {"small"}, "small");
    small->setAttr("value", Attribute(Tensor::fromVector<float>(DType::Float, {1}, {1.5f})));
    for (Node* n : {big, bigUntyped, small}) g.addOutput(n->output(0));
    inferShapes(*m);
    QVERIFY(big->output(0)->type().byteSize().value_or(0) == int64_t{1} << 40);
    bigUntyped->output(0)->setType({});  // the kernel's own limit must catch it before allocating

    auto fold = makeConstantFoldingPass();
    PassResult r = runPass(*fold, *m);
    QCOMPARE(counter(r, "skipped_too_large"), int64_t{2});
    QCOMPARE(counter(r, "folded"), int64_t{1});
    QCOMPARE(g.numNodes(), size_t{2});
    QVERIFY2(problems(*m).isEmpty(), qPrintable(problems(*m)));
    const Tensor* s = g.outputs()[2]->constant();
    QVERIFY(s);
    QCOMPARE(s->toDouble(), std::vector<double>(6, 1.5));
    QCOMPARE(g.outputs()[2]->name(), std::string("small"));
    // Skips are counted once per node, not once per fixpoint visit, and are not a change.
    PassResult again = runPass(*fold, *m);
    QCOMPARE(counter(again, "skipped_too_large"), int64_t{2});
    QVERIFY(!again.changed);
  }

  void switchedOffDoesNothing() {
    auto m = newModel();
    Graph& g = *m->graph;
    Node* c = g.addNode("Constant", {}, {"c"}, "c");
    c->setAttr("value_float", Attribute(2.0f));
    Node* neg = g.addNode("Neg", {c->output(0)}, {"n"}, "neg");
    g.addOutput(neg->output(0));
    inferShapes(*m);
    Options off;
    off.setValue("oo_constant_folding", Json(false));
    auto fold = makeConstantFoldingPass();
    PassResult r = runPass(*fold, *m, off);
    QVERIFY(!r.changed);
    QVERIFY(r.counters.empty());
    QCOMPARE(g.numNodes(), size_t{2});
    QVERIFY(runPass(*fold, *m).changed);
    QCOMPARE(g.numNodes(), size_t{0});
    QCOMPARE(g.outputs()[0]->constant()->toDouble(), std::vector<double>{-2.0});
  }

  void constantNodesBecomeInitializers() {
    auto m = newModel();
    Graph& g = *m->graph;
    Value* x = g.addInput("x", tensorType(DType::Float, {2}));
    Node* c1 = g.addNode("Constant", {}, {"c1"}, "c1");
    c1->setAttr("value", Attribute(Tensor::fromVector<float>(DType::Float, {2}, {1, 2})));
    Node* c2 = g.addNode("Constant", {}, {"c2"}, "c2");
    c2->setAttr("value_float", Attribute(3.0f));
    Node* c3 = g.addNode("Constant", {}, {"c3"}, "c3");
    c3->setAttr("value_ints", Attribute(Dims{7, 8}));
    Node* unused = g.addNode("Constant", {}, {"unused"}, "unused");  // dead code: left to dead-code elimination
    unused->setAttr("value_int", Attribute(int64_t{1}));
    Node* add = g.addNode("Add", {x, c1->output(0)}, {"a"}, "add");
    Node* mul = g.addNode("Mul", {add->output(0), c2->output(0)}, {"b"}, "mul");
    g.addOutput(mul->output(0));
    g.addOutput(c3->output(0));
    inferShapes(*m);
    auto fold = makeConstantFoldingPass();
    PassResult r = runPass(*fold, *m);
    QCOMPARE(counter(r, "constants_to_initializers"), int64_t{3});
    QCOMPARE(counter(r, "folded"), int64_t{0});  // Add and Mul read the graph input
    QVERIFY2(problems(*m).isEmpty(), qPrintable(problems(*m)));
    QCOMPARE(g.numNodes(), size_t{3});
    QCOMPARE(add->input(1)->name(), std::string("c1"));
    QCOMPARE(add->input(1)->constant()->toDouble(), (std::vector<double>{1, 2}));
    QCOMPARE(mul->input(1)->constant()->dims(), Dims{});
    QCOMPARE(g.outputs()[1]->name(), std::string("c3"));
    QCOMPARE(g.outputs()[1]->constant()->toInt64(), (std::vector<int64_t>{7, 8}));
  }

  void graphInputWithDefaultIsNotConstant() {
    // An initializer that is also a graph input is an overridable default (ONNX IR < 4): never folded.
    auto m = newModel();
    Graph& g = *m->graph;
    Value* d = g.addInput("d", tensorType(DType::Float, {1}));
    d->setConstant(Tensor::fromVector<float>(DType::Float, {1}, {4}));
    g.addOutput(g.addNode("Sqrt", {d}, {"r"}, "sqrt")->output(0));
    inferShapes(*m);
    auto fold = makeConstantFoldingPass();
    QVERIFY(!runPass(*fold, *m).changed);
    QCOMPARE(g.numNodes(), size_t{1});
  }

  void dimensionComputeStaticVsSymbolic() {
    auto m = newModel();
    Graph& g = *m->graph;
    Value* x = g.addInput("x", ValueType::tensor(DType::Float, Shape({Dim::symbolic("batch"), Dim::fixed(3),
                                                                      Dim::fixed(224), Dim::fixed(224)})));
    Value* y = g.addInput("y", tensorType(DType::Float, {2, 3}));
    Node* whole = g.addNode("Shape", {x}, {"whole"}, "whole");
    Node* tail = g.addNode("Shape", {x}, {"tail"}, "tail");
    tail->setAttr("start", Attribute(int64_t{1}));
    Node* mid = g.addNode("Shape", {x}, {"mid"}, "mid");
    mid->setAttr("start", Attribute(int64_t{-2}));
    mid->setAttr("end", Attribute(int64_t{-1}));
    Node* sizeX = g.addNode("Size", {x}, {"size_x"}, "size_x");
    Node* sizeY = g.addNode("Size", {y}, {"size_y"}, "size_y");
    for (Node* n : {whole, tail, mid, sizeX, sizeY}) g.addOutput(n->output(0));
    inferShapes(*m);
    auto pass = makeDimensionComputePass();
    PassResult r = runPass(*pass, *m);
    QCOMPARE(counter(r, "shapes_computed"), int64_t{3});
    QVERIFY2(problems(*m).isEmpty(), qPrintable(problems(*m)));
    QCOMPARE(g.numNodes(), size_t{2});  // Shape(x) and Size(x) depend on the batch
    QCOMPARE(whole->opType(), std::string("Shape"));
    QCOMPARE(sizeX->opType(), std::string("Size"));
    QCOMPARE(g.outputs()[1]->constant()->toInt64(), (std::vector<int64_t>{3, 224, 224}));
    QCOMPARE(g.outputs()[2]->constant()->toInt64(), (std::vector<int64_t>{224}));
    QCOMPARE(g.outputs()[4]->constant()->dims(), Dims{});
    QCOMPARE(g.outputs()[4]->constant()->toInt64(), (std::vector<int64_t>{6}));
    QCOMPARE(g.outputs()[4]->type(), tensorType(DType::Int64, {}));
  }

  void batchNormFoldsIntoConv() {
    struct Case {
      ConvSpec spec;
      bool bias;
      DType type;
      double tolerance;
    };
    for (const Case& c : {Case{{}, true, DType::Float, 1e-5}, Case{{}, false, DType::Float, 1e-5},
                          Case{{.c = 4, .m = 6, .group = 2}, true, DType::Float, 1e-5},
                          Case{{.c = 4, .m = 4, .group = 4}, false, DType::Float, 1e-5},  // depthwise
                          Case{{.c = 4, .m = 6, .group = 2}, false, DType::Double, 1e-12},
                          Case{{}, true, DType::Float16, 2e-3},  // fp16: each folded weight rounds once
                          Case{{.c = 64, .m = 256, .hw = 3}, true, DType::Float, 1e-5}}) {  // split across cores
      checkConvBnFold(c.spec, c.bias, c.type, c.tolerance);
      if (QTest::currentTestFailed()) return;
    }
  }

  void batchNormFoldsIntoGemm() {
    for (const bool transB : {false, true}) {
      auto m = newModel();
      Graph& g = *m->graph;
      const int64_t rows = 3, k = 5, n = 4;
      Value* a = g.addInput("a", tensorType(DType::Float, {rows, k}));
      const std::vector<double> bv =
          ofType(DType::Float, {k * n}, seq(static_cast<size_t>(k * n), 0.7, 0.2)).toDouble();
      const std::vector<double> cv = ofType(DType::Float, {n}, seq(static_cast<size_t>(n), 1.1, 0.4)).toDouble();
      const Dims bDims = transB ? Dims{n, k} : Dims{k, n};
      Node* gemm = g.addNode("Gemm",
                             {a, g.addInitializer("B", ofType(DType::Float, bDims, bv)),
                              g.addInitializer("C", ofType(DType::Float, {1, n}, cv))},
                             {"g"}, "gemm");
      gemm->setAttr("transB", Attribute(int64_t{transB}));
      gemm->setAttr("alpha", Attribute(0.75f));
      gemm->setAttr("beta", Attribute(0.5f));
      BnParams bn(n);
      g.addOutput(bn.addTo(g, gemm->output(0), DType::Float, "y")->output(0));
      inferShapes(*m);
      QVERIFY2(problems(*m).isEmpty(), qPrintable(problems(*m)));

      const std::vector<double> av = seq(static_cast<size_t>(rows * k), 0.3, 0.9);
      auto gemmRef = [&](const std::vector<double>& b, const std::vector<double>& c, double beta, int64_t cCols) {
        std::vector<double> y;
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t j = 0; j < n; ++j) {
            double acc = 0;
            for (int64_t i = 0; i < k; ++i)
              acc += av[static_cast<size_t>(r * k + i)] * b[static_cast<size_t>(transB ? j * k + i : i * n + j)];
            y.push_back(0.75 * acc + beta * c[static_cast<size_t>(cCols == 1 ? 0 : j)]);
          }
        return y;
      };
      std::vector<double> reference = gemmRef(bv, cv, 0.5, n);
      for (size_t i = 0; i < reference.size(); ++i) reference[i] = bn.apply(reference[i], i % static_cast<size_t>(n));

      auto pass = makeBatchNormFoldPass();
      QCOMPARE(counter(runPass(*pass, *m), "folded"), int64_t{1});
      QVERIFY2(problems(*m).isEmpty(), qPrintable(problems(*m)));
      QCOMPARE(g.numNodes(), size_t{1});
      QCOMPARE(gemm->attrFloat("beta", 0), 1.0f);
      QCOMPARE(gemm->input(2)->constant()->dims(), (Dims{1, n}));
      const std::vector<double> got =
          gemmRef(gemm->input(1)->constant()->toDouble(), gemm->input(2)->constant()->toDouble(), 1.0, n);
      for (size_t i = 0; i < got.size(); ++i)
        QVERIFY2(
            std::fabs(got[i] - reference[i]) <= 1e-5 * std::max(1.0, std::fabs(reference[i])),
            qPrintable(QString("transB=%1 element %2: %3 vs %4").arg(transB).arg(i).arg(got[i]).arg(reference[i])));
    }
  }

  void batchNormNotFoldedWhenConvOutputIsShared() {
    auto m = newModel();
    Graph& g = *m->graph;
    Value* x = g.addInput("x", tensorType(DType::Float, {1, 2, 4, 4}));
    Node* conv =
        g.addNode("Conv", {x, g.addInitializer("w", ofType(DType::Float, {2, 2, 1, 1}, {1, 0, 0, 1}))}, {"c"}, "conv");
    BnParams bn(2);
    g.addOutput(bn.addTo(g, conv->output(0), DType::Float, "y")->output(0));
    g.addOutput(g.addNode("Relu", {conv->output(0)}, {"r"}, "relu")->output(0));  // a second reader of the Conv
    inferShapes(*m);
    auto pass = makeConvBnFusionPass();
    PassResult r = runPass(*pass, *m);
    QVERIFY(!r.changed);
    QCOMPARE(g.numNodes(), size_t{3});

    // Non-constant BN statistics (a graph input) cannot be folded either.
    auto m2 = newModel();
    Graph& g2 = *m2->graph;
    Value* x2 = g2.addInput("x", tensorType(DType::Float, {1, 2, 4, 4}));
    Node* conv2 = g2.addNode("Conv", {x2, g2.addInitializer("w", ofType(DType::Float, {2, 2, 1, 1}, {1, 0, 0, 1}))},
                             {"c"}, "conv");
    Value* mean = g2.addInput("mean", tensorType(DType::Float, {2}));
    const Dims d{2};
    g2.addOutput(g2.addNode("BatchNormalization",
                            {conv2->output(0), g2.addInitializer("s", ofType(DType::Float, d, {1, 1})),
                             g2.addInitializer("b", ofType(DType::Float, d, {0, 0})), mean,
                             g2.addInitializer("v", ofType(DType::Float, d, {1, 1}))},
                            {"y"}, "bn")
                     ->output(0));
    inferShapes(*m2);
    QVERIFY(!runPass(*pass, *m2).changed);
  }

  void realModels() {
    const QString dir = QStringLiteral(KILN_SHARED_DIR) + "/models";
    if (!QFileInfo::exists(dir)) QSKIP("../shared/models is absent");
    struct Case {
      const char* file;
      bool resnet;
    };
    for (const Case& c : {Case{"cnn/light_resnet50.onnx", true}, Case{"transformer/gpt2_past.onnx", false},
                          Case{"transformer/bert_toy_optimized.onnx", false}}) {
      const QString path = dir + "/" + c.file;
      if (!QFileInfo::exists(path)) QSKIP(qPrintable(path + " is absent"));
      LoadedModel loaded = loadModel(path.toStdString());
      Model& m = *loaded.model;
      const QString before = problems(m);
      const auto opsBefore = opCounts(m);
      const size_t nodesBefore = m.graph->numNodesRecursive();
      QStringList counters;
      for (auto make : {makeDimensionComputePass, makeConstantFoldingPass, makeBatchNormFoldPass}) {
        auto pass = make();
        const PassResult r = runPass(*pass, m);
        for (const auto& [key, value] : r.counters)
          counters
              << QString("%1.%2=%3").arg(QString::fromStdString(pass->name()), QString::fromStdString(key)).arg(value);
        QVERIFY2(problems(m).isEmpty() || problems(m) == before,
                 qPrintable(QString::fromStdString(pass->name()) + ": " + problems(m)));
      }
      const auto opsAfter = opCounts(m);
      const auto count = [](const std::map<std::string, int>& ops, const char* op) {
        auto it = ops.find(op);
        return it == ops.end() ? 0 : it->second;
      };
      qInfo(
          "%s: %zu -> %zu nodes (Constant %d -> %d, ConstantOfShape %d -> %d, Shape %d -> %d, BatchNormalization %d -> "
          "%d); %s",
          c.file, nodesBefore, m.graph->numNodesRecursive(), count(opsBefore, "Constant"), count(opsAfter, "Constant"),
          count(opsBefore, "ConstantOfShape"), count(opsAfter, "ConstantOfShape"), count(opsBefore, "Shape"),
          count(opsAfter, "Shape"), count(opsBefore, "BatchNormalization"), count(opsAfter, "BatchNormalization"),
          qPrintable(counters.join(", ")));
      QVERIFY2(before.isEmpty(), qPrintable(QString(c.file) + " did not verify before the passes: " + before));
      QVERIFY(m.graph->numNodesRecursive() < nodesBefore);
      // Shapes stay inferable over what the passes created.
      const InferenceReport again = inferShapes(m);
      QCOMPARE(again.nodesFailed, loaded.inference.nodesFailed);
      QVERIFY2(problems(m).isEmpty(), qPrintable(problems(m)));
      if (c.resnet) {
        QCOMPARE(count(opsBefore, "ConstantOfShape"), 239);
        QCOMPARE(count(opsAfter, "ConstantOfShape"), 0);
        // Every BN follows a Conv: Stage 1 leaves them to ConvBatchNormFusion (tests/fusion/test_fusion_models).
        QCOMPARE(count(opsAfter, "BatchNormalization"), 53);
      }
    }
  }
};

QTEST_GUILESS_MAIN(FoldingPassesTest)
#include "test_folding_passes.moc"
