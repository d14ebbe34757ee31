// The pattern matcher (commutative operands, unified bindings, closure of the group, attribute predicates) and the
// Stage 2 rules ConvActivation, MatMulBiasAdd, MatMulAddGelu, Gelu, TransposeMatMul, AddLayerNorm and AddRmsNorm on
// small graphs built for each: the positive forms exporters write and the negatives that must not fuse (a second
// reader, a computed bias or bound, a bias along the wrong axis, a perm that is not a matrix transpose, integer
// types, the rule switched off). Where the reference kernels cover both graphs, the fused graph is evaluated against
// the original on random inputs. (ConvBatchNormFusion's value checks live in tests/passes/test_folding_passes.)
#include <QtTest>
#include <cmath>
#include <numbers>

#include "ir/fused_node.h"
#include "fusion/pattern.h"
#include "fusion/rules/builtin_rules.h"
#include "ir/graph.h"
#include "ir/model.h"
#include "ir/opdefs/shape_inference.h"
#include "fusion/graph_fusion_pass.h"
#include "options/options.h"
#include "support/evaluate_graph.h"
#include "support/fusion_test_support.h"

using namespace kiln;
using kiln::testing::counter;
using kiln::testing::f32;
using kiln::testing::floats;
using kiln::testing::runFusion;
using kiln::testing::problems;

namespace {

using Dims = std::vector<int64_t>;

Tensor filled(Dims dims, double x) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return floats(std::move(dims), std::vector<double>(static_cast<size_t>(n), x));
}

std::unique_ptr<Model> newModel(int64_t opset = 17) {
  auto m = std::make_unique<Model>();
  m->opsets[""] = opset;
  return m;
}

Node* only(const Graph& g) { return g.numNodes() == 1 ? *g.nodes().begin() : nullptr; }

int count(const Graph& g, const std::string& qualifiedType) {
  int n = 0;
  for (const Node* x : g.nodes()) n += x->qualifiedType() == qualifiedType;
  return n;
}

// Evaluates the model's graph on random inputs, runs the standard fusion, evaluates again: returns the largest
// difference between the two runs' outputs (negative when a kernel is missing).
double fuseAndCompare(Model& m, PassResult* result = nullptr) {
  std::map<std::string, Tensor> in;
  unsigned seed = 7;
  for (const Value* v : m.graph->inputs())
    in.emplace(v->name(), testing::randomFloats(*v->type().shape.staticExtents(), seed++));
  const auto before = testing::evaluateGraph(*m.graph, in);
  const PassResult r = runFusion(m);
  if (result) *result = r;
  const auto after = testing::evaluateGraph(*m.graph, in);
  if (before.empty() || after.size() != before.size()) return -1;
  double worst = 0;
  for (size_t i = 0; i < before.size(); ++i) worst = std::max(worst, testing::maxDifference(before[i], after[i]));
  return worst;
}

// GPT-2's Conv1D as exported: Reshape([2,3,4] -> [6,4]) -> Gemm(W[4,5], b[5]) -> Reshape([6,5] -> [2,3,5]).
struct GemmLinear {
  std::unique_ptr<Model> m = newModel();
  Graph* g = m->graph.get();
  Node *flatten = nullptr, *gemm = nullptr, *restore = nullptr;
  explicit GemmLinear(bool transB = false, Dims restoreTo = {2, 3, 5}) {
    Value* x = g->addInput("x", f32({2, 3, 4}));
    flatten = g->addNode("Reshape", {x, g->addInitializer("flat", Tensor::fromVector(DType::Int64, {2}, std::vector<int64_t>{-1, 4}))}, {"x2"}, "flatten");
    Value* w = g->addInitializer("W", transB ? filled({5, 4}, 0.25) : filled({4, 5}, 0.25));
    gemm = g->addNode("Gemm", {flatten->output(0), w, g->addInitializer("b", filled({5}, 0.5))}, {"y2"}, "gemm");
    if (transB) gemm->setAttr("transB", Attribute(int64_t{1}));
    restore = g->addNode("Reshape", {gemm->output(0), g->addInitializer("back", Tensor::fromVector(DType::Int64, {int64_t(restoreTo.size())}, restoreTo))}, {"y"}, "restore");
    g->addOutput(restore->output(0));
    inferShapes(*m);
  }
};

// x[1,2,4,4] -> Conv(W[3,2,1,1], B[3]) -> y (the conv output, not yet a graph output)
struct ConvGraph {
  std::unique_ptr<Model> m;
  Graph* g = nullptr;
  Node* conv = nullptr;
  Value* y = nullptr;
  explicit ConvGraph(int64_t opset = 14) : m(newModel(opset)) {
    g = m->graph.get();
    Value* x = g->addInput("x", f32({1, 2, 4, 4}));
    conv = g->addNode("Conv",
                      {x, g->addInitializer("W", floats({3, 2, 1, 1}, {1, 0, 0, 1, 1, 1})),
                       g->addInitializer("B", floats({3}, {1, 2, 3}))},
                      {"conv_out"}, "conv");
    conv->setAttr("kernel_shape", Attribute(Dims{1, 1}));
    y = conv->output(0);
  }
  Value* op(const std::string& type, std::vector<Value*> in, const std::string& out) {
    return g->addNode(type, in, {out}, out)->output(0);
  }
  Value* c(const std::string& name, double v) { return g->addInitializer(name, floats({}, {v})); }
  Node* finish(Value* out) {
    g->addOutput(out);
    inferShapes(*m);
    return out->producer();
  }
};

// a[2,3,4] @ B[4,5] -> product; the tests add a bias and the rest.
struct MatMulGraph {
  std::unique_ptr<Model> m = newModel(17);
  Graph* g = m->graph.get();
  Value* a = g->addInput("a", f32({2, 3, 4}));
  Node* matmul = g->addNode("MatMul", {a, g->addInitializer("B", testing::randomFloats({4, 5}, 3))}, {"product"}, "mm");
  Value* product = matmul->output(0);
  Value* op(const std::string& type, std::vector<Value*> in, const std::string& out, const std::string& domain = {}) {
    return g->addNode(type, in, {out}, out, domain)->output(0);
  }
  Value* c(const std::string& name, double v) { return g->addInitializer(name, floats({}, {v})); }
  Value* bias(Dims dims = {5}) { return g->addInitializer("bias", testing::randomFloats(std::move(dims), 4)); }
  void finish(Value* out) {
    g->addOutput(out);
    inferShapes(*m);
  }
};

// Erf GELU of x in the association and constants `form` selects.
Value* erfGelu(MatMulGraph& t, Value* x, int form) {
  Value* scaled = form == 1 ? t.op("Mul", {t.c("inv_sqrt2", 0.70710678), x}, "scaled")
                            : t.op("Div", {x, t.c("sqrt2", 1.4142135)}, "scaled");
  Value* e = t.op("Add", {t.c("one", 1.0), t.op("Erf", {scaled}, "erf")}, "e");
  if (form == 1) return t.op("Mul", {t.op("Mul", {t.c("half", 0.5), x}, "hx"), e}, "gelu");  // (0.5·x)·e
  return t.op("Mul", {t.op("Mul", {x, e}, "xe"), t.c("half", 0.5)}, "gelu");                 // (x·e)·0.5
}

Value* tanhGelu(MatMulGraph& t, Value* x) {
  Value* cube = t.op("Pow", {x, t.c("three", 3.0)}, "cube");
  Value* poly = t.op("Add", {x, t.op("Mul", {t.c("k", 0.044715), cube}, "kc")}, "poly");
  Value* th = t.op("Tanh", {t.op("Mul", {poly, t.c("s", std::sqrt(2.0 / std::numbers::pi))}, "arg")}, "th");
  Value* e = t.op("Add", {th, t.c("one", 1.0)}, "e");
  return t.op("Mul", {x, t.op("Mul", {e, t.c("half", 0.5)}, "eh")}, "gelu");  // x·(e·0.5)
}

// x[2,4,8] (+ r) -> written-out LayerNorm or RMSNorm with gamma (and beta) -> y
Value* layerNorm(Graph& g, Value* x, bool rms) {
  auto c = [&](const std::string& n, Tensor t) { return g.addInitializer(n, std::move(t)); };
  auto mean = [&](Value* v, const std::string& n) {
    Node* r = g.addNode("ReduceMean", {v}, {n}, n);
    r->setAttr("axes", Attribute(Dims{-1}));
    return r->output(0);
  };
  Value* d = rms ? x : g.addNode("Sub", {x, mean(x, "mean")}, {"d"}, "d")->output(0);
  Value* var = mean(g.addNode("Pow", {d, c("two", filled({}, 2))}, {"sq"}, "sq")->output(0), "var");
  Value* sd =
      g.addNode("Sqrt", {g.addNode("Add", {var, c("eps", filled({}, 1e-5))}, {"ve"}, "ve")->output(0)}, {"sd"}, "sd")
          ->output(0);
  Value* n = g.addNode("Div", {d, sd}, {"n"}, "n")->output(0);
  Value* y = g.addNode("Mul", {n, c("gamma", testing::randomFloats({8}, 5))}, {"scaled"}, "scaled")->output(0);
  if (rms) return y;
  return g.addNode("Add", {y, c("beta", testing::randomFloats({8}, 6))}, {"y"}, "y")->output(0);
}

}  // namespace

class FusionRulesTest : public QObject {
  Q_OBJECT
 private slots:
  // ---- the matcher ----
  void patternMatchesCommutativeOperandsAndUnifiesBindings() {
    using namespace pattern;
    auto m = newModel();
    Graph& g = *m->graph;
    Value* x = g.addInput("x", f32({4}));
    Value* z = g.addInput("z", f32({4}));
    Node* sig = g.addNode("Sigmoid", {x}, {"s"});
    Node* silu = g.addNode("Mul", {sig->output(0), x}, {"y"});  // σ(x) first: only the commuted order matches
    Node* sigZ = g.addNode("Sigmoid", {z}, {"sz"});
    Node* notSilu = g.addNode("Mul", {x, sigZ->output(0)}, {"w"});  // x·σ(z): the two x's differ
    g.setOutputs({silu->output(0), notSilu->output(0)});
    const Op p = op("Mul", {any("x"), from(op("Sigmoid", {any("x")}).bind("sig"))});
    QVERIFY(!match(p, *silu));  // not commutative: the order is fixed
    const Op pc = Op(p).commutative();
    QVERIFY(!match(p, *silu));  // the copy changed, the original did not
    const auto hit = match(pc, *silu);
    QVERIFY(hit);
    QCOMPARE(hit->value("x"), x);
    QCOMPARE(hit->node("sig"), sig);
    QCOMPARE(hit->nodes(), (std::vector<Node*>{silu, sig}));
    QVERIFY(!match(pc, *notSilu));
  }

  void patternRefusesIntermediatesReadOutside() {
    using namespace pattern;
    auto m = newModel();
    Graph& g = *m->graph;
    Value* x = g.addInput("x", f32({4}));
    Node* relu = g.addNode("Relu", {x}, {"r"});
    Node* neg = g.addNode("Neg", {relu->output(0)}, {"y"});
    g.addOutput(neg->output(0));
    const Op p = op("Neg", {from(op("Relu", {any()}))});
    QVERIFY(match(p, *neg));
    Node* other = g.addNode("Abs", {relu->output(0)}, {"other"});  // a second reader of the intermediate
    g.addOutput(other->output(0));
    QVERIFY(!match(p, *neg));
    QVERIFY(match(p, *neg, {relu->output(0)}));  // unless the caller keeps it as an output
  }

  void patternTestsAttributesAndConstants() {
    using namespace pattern;
    auto m = newModel();
    Graph& g = *m->graph;
    Value* x = g.addInput("x", f32({4}));
    Node* leaky = g.addNode("LeakyRelu", {x}, {"l"});
    leaky->setAttr("alpha", Attribute(0.1f));
    Node* mul = g.addNode("Mul", {leaky->output(0), g.addInitializer("half", filled({}, 0.5))}, {"y"});
    g.addOutput(mul->output(0));
    auto alphaIs = [](float a) { return [a](const Node& n) { return n.attrFloat("alpha", 0.01f) == a; }; };
    QVERIFY(match(op("Mul", {from(op("LeakyRelu", {any()}).where(alphaIs(0.1f))), scalar(0.5)}), *mul));
    QVERIFY(!match(op("Mul", {from(op("LeakyRelu", {any()}).where(alphaIs(0.2f))), scalar(0.5)}), *mul));
    QVERIFY(!match(op("Mul", {from(op("LeakyRelu", {any()})), scalar(0.25)}), *mul));
    QVERIFY(!match(op("Mul", {from(op("LeakyRelu", {any()})), scalar(0.5)}), *leaky));  // wrong anchor type
  }

  // ---- ConvActivationFusion ----
  void convActivationFusesEachActivation_data() {
    QTest::addColumn<QString>("form");
    QTest::addColumn<QString>("activation");
    QTest::addColumn<QList<float>>("params");
    for (const char* a : {"Relu", "Sigmoid", "Tanh", "HardSwish"}) QTest::newRow(a) << a << a << QList<float>{};
    QTest::newRow("LeakyRelu") << "LeakyRelu"
                               << "LeakyRelu" << QList<float>{0.1f};
    QTest::newRow("HardSigmoid") << "HardSigmoid"
                                 << "HardSigmoid" << QList<float>{0.3f, 0.4f};
    QTest::newRow("Clip inputs 0..6") << "Clip6"
                                      << "Relu6" << QList<float>{};
    QTest::newRow("Clip attributes -1..1 (opset 6)") << "ClipAttr"
                                                     << "Clip" << QList<float>{-1, 1};
    QTest::newRow("SiLU x*Sigmoid(x)") << "SiLU"
                                       << "SiLU" << QList<float>{};
    QTest::newRow("x*HardSigmoid(x)") << "xHardSigmoid"
                                      << "HardSwish" << QList<float>{};
    QTest::newRow("x*Relu6(x+3)/6") << "mobilenetv3"
                                    << "HardSwish" << QList<float>{};
    QTest::newRow("x*(Relu6(x+3)*(1/6))") << "mobilenetv3mul"
                                          << "HardSwish" << QList<float>{};
  }
  void convActivationFusesEachActivation() {
    QFETCH(QString, form);
    QFETCH(QString, activation);
    QFETCH(QList<float>, params);
    ConvGraph t(form == "ClipAttr" ? 6 : 13);
    Value* y = t.y;
    Value* out = nullptr;
    const std::string f = form.toStdString();
    if (f == "Clip6") {
      out = t.op("Clip", {y, t.c("lo", 0), t.c("hi", 6)}, "act");
    } else if (f == "ClipAttr") {
      Node* clip = t.g->addNode("Clip", {y}, {"act"}, "act");
      clip->setAttr("min", Attribute(-1.0f));
      clip->setAttr("max", Attribute(1.0f));
      out = clip->output(0);
    } else if (f == "SiLU") {
      out = t.op("Mul", {t.op("Sigmoid", {y}, "sig"), y}, "act");
    } else if (f == "xHardSigmoid") {
      Node* hs = t.g->addNode("HardSigmoid", {y}, {"hs"}, "hs");
      hs->setAttr("alpha", Attribute(1.0f / 6));
      out = t.op("Mul", {y, hs->output(0)}, "act");
    } else if (f.starts_with("mobilenetv3")) {
      Value* r6 = t.op("Clip", {t.op("Add", {y, t.c("three", 3)}, "p3"), t.c("lo", 0), t.c("hi", 6)}, "r6");
      out = f == "mobilenetv3" ? t.op("Mul", {y, t.op("Div", {r6, t.c("six", 6)}, "d6")}, "act")
                               : t.op("Mul", {y, t.op("Mul", {t.c("sixth", 1.0 / 6), r6}, "d6")}, "act");
    } else {
      Node* a = t.g->addNode(f, {y}, {"act"}, "act");
      if (f == "LeakyRelu") a->setAttr("alpha", Attribute(0.1f));
      if (f == "HardSigmoid") {
        a->setAttr("alpha", Attribute(0.3f));
        a->setAttr("beta", Attribute(0.4f));
      }
      out = a->output(0);
    }
    t.finish(out);
    const PassResult r = runFusion(*t.m);
    QCOMPARE(counter(r, "ConvActivationFusion"), 1);
    QCOMPARE(problems(*t.m), QString());
    Node* fused = only(*t.g);
    QVERIFY(fused);
    QCOMPARE(fused->qualifiedType(), std::string("kiln:FusedConv"));
    QCOMPARE(fused->attrString("activation", ""), activation.toStdString());
    const auto* p = fused->attr("activation_params")->get<std::vector<float>>();
    QVERIFY(p);
    QCOMPARE(QList<float>(p->begin(), p->end()), params);
    QCOMPARE(fused->attrInts("kernel_shape"), (Dims{1, 1}));  // the Conv's attributes come along
    QCOMPARE(fused->numInputs(), size_t(3));
    QCOMPARE(fused->output(0)->name(), std::string("act"));
    inferShapes(*t.m);  // the op's own inference
    QCOMPARE(fused->output(0)->type().shape, Shape::ofStatic({1, 3, 4, 4}));
  }

  void convActivationWithResidualTakesZ() {
    ConvGraph t;
    Value* z = t.g->addInput("z", f32({1, 3, 4, 4}));
    t.finish(t.op("Relu", {t.op("Add", {z, t.y}, "sum")}, "act"));
    QCOMPARE(counter(runFusion(*t.m), "ConvActivationFusion"), 1);
    Node* fused = only(*t.g);
    QVERIFY(fused);
    QCOMPARE(fused->numInputs(), size_t(4));
    QCOMPARE(fused->input(3), z);
    QCOMPARE(problems(*t.m), QString());
  }

  void convActivationLeavesWhatItCannotProve() {
    {  // the Conv output has a second reader
      ConvGraph t;
      t.g->addOutput(t.y);
      t.finish(t.op("Relu", {t.y}, "act"));
      QCOMPARE(counter(runFusion(*t.m), "ConvActivationFusion"), 0);
    }
    {  // Clip bound computed at run time
      ConvGraph t;
      Value* hi = t.g->addInput("hi", f32({}));
      t.finish(t.op("Clip", {t.y, t.c("lo", 0), hi}, "act"));
      QCOMPARE(counter(runFusion(*t.m), "ConvActivationFusion"), 0);
    }
    {  // x·Sigmoid(z) is not SiLU
      ConvGraph t;
      Value* z = t.g->addInput("z", f32({1, 3, 4, 4}));
      t.finish(t.op("Mul", {t.y, t.op("Sigmoid", {z}, "sig")}, "act"));
      QCOMPARE(counter(runFusion(*t.m), "ConvActivationFusion"), 0);
    }
    {  // a residual that broadcasts is not an element-for-element Z
      ConvGraph t;
      Value* z = t.g->addInput("z", f32({1, 3, 1, 1}));
      t.finish(t.op("Relu", {t.op("Add", {t.y, z}, "sum")}, "act"));
      QCOMPARE(counter(runFusion(*t.m), "ConvActivationFusion"), 0);
    }
    {  // switched off
      ConvGraph t;
      t.finish(t.op("Relu", {t.y}, "act"));
      Options o;
      o.set("fusion_switch=ConvActivationFusion:off");
      QCOMPARE(counter(runFusion(*t.m, o), "ConvActivationFusion"), 0);
      QCOMPARE(t.g->numNodes(), size_t(2));
    }
  }

  void convBatchNormSwitchedOffKeepsTheBatchNorm() {
    ConvGraph t;
    const Dims d{3};
    Node* bn = t.g->addNode("BatchNormalization",
                            {t.y, t.g->addInitializer("s", filled(d, 2)), t.g->addInitializer("b", filled(d, 1)),
                             t.g->addInitializer("mean", filled(d, 0.5)), t.g->addInitializer("var", filled(d, 4))},
                            {"bn"}, "bn");
    t.finish(t.op("Relu", {bn->output(0)}, "act"));
    Options o;
    o.set("fusion_switch=ConvBatchNormFusion:off");
    const PassResult off = runFusion(*t.m, o);
    QCOMPARE(counter(off, "ConvBatchNormFusion"), 0);
    QCOMPARE(count(*t.g, "BatchNormalization"), 1);
    // On: BN folds, then the Relu joins the folded Conv.
    const PassResult on = runFusion(*t.m);
    QCOMPARE(counter(on, "ConvBatchNormFusion"), 1);
    QCOMPARE(counter(on, "ConvActivationFusion"), 1);
    QVERIFY(only(*t.g));
    QCOMPARE(replacedNodeIds(*only(*t.g)).size(), size_t(3));
    QCOMPARE(problems(*t.m), QString());
  }

  // ---- MatMulBiasAddFusion ----
  void matMulBiasAddFusesLastAxisBias_data() {
    QTest::addColumn<QList<qlonglong>>("dims");
    QTest::addColumn<bool>("biasFirst");
    QTest::newRow("[N]") << QList<qlonglong>{5} << false;
    QTest::newRow("[1,1,N], bias on the left") << QList<qlonglong>{1, 1, 5} << true;
  }
  void matMulBiasAddFusesLastAxisBias() {
    QFETCH(QList<qlonglong>, dims);
    QFETCH(bool, biasFirst);
    MatMulGraph t;
    Value* b = t.bias(Dims(dims.begin(), dims.end()));
    t.finish(t.op("Add", biasFirst ? std::vector<Value*>{b, t.product} : std::vector<Value*>{t.product, b}, "y"));
    PassResult r;
    const double diff = fuseAndCompare(*t.m, &r);
    QCOMPARE(counter(r, "MatMulBiasAddFusion"), 1);
    Node* fused = only(*t.g);
    QVERIFY(fused);
    QCOMPARE(fused->qualifiedType(), std::string("kiln:FusedMatMul"));
    QCOMPARE(fused->input(2), b);
    QCOMPARE(fused->attrString("activation", "?"), std::string());
    QCOMPARE(fused->attrInt("trans_a", 1), int64_t(0));
    QCOMPARE(problems(*t.m), QString());
    if (diff < 0)
      qInfo("no MatMul kernel yet (issue 7): MatMulBiasAddFusion has no numeric check");
    else
      QVERIFY2(diff < 1e-4, qPrintable(QString::number(diff)));
    inferShapes(*t.m);
    QCOMPARE(fused->output(0)->type().shape, Shape::ofStatic({2, 3, 5}));
  }

  void matMulBiasAddLeavesWhatIsNotABias() {
    const std::vector<Dims> notBias{{3, 1}, {2, 3, 5}, {1, 2, 3, 5}};  // per row, full tensor, broadcasting up
    for (const Dims& d : notBias) {
      MatMulGraph t;
      t.finish(t.op("Add", {t.product, t.bias(d)}, "y"));
      QCOMPARE(counter(runFusion(*t.m), "MatMulBiasAddFusion"), 0);
    }
    {  // a computed bias
      MatMulGraph t;
      t.finish(t.op("Add", {t.product, t.g->addInput("b", f32({5}))}, "y"));
      QCOMPARE(counter(runFusion(*t.m), "MatMulBiasAddFusion"), 0);
    }
    {  // the product has another reader
      MatMulGraph t;
      t.g->addOutput(t.product);
      t.finish(t.op("Add", {t.product, t.bias()}, "y"));
      QCOMPARE(counter(runFusion(*t.m), "MatMulBiasAddFusion"), 0);
    }
    {  // switched off
      MatMulGraph t;
      t.finish(t.op("Add", {t.product, t.bias()}, "y"));
      Options o;
      o.set("fusion_switch=MatMulBiasAddFusion:off");
      QCOMPARE(counter(runFusion(*t.m, o), "MatMulBiasAddFusion"), 0);
    }
  }

  // ---- MatMulAddGeluFusion and GeluFusion ----
  void matMulAddGeluFusesEveryGeluForm_data() {
    QTest::addColumn<QString>("form");
    QTest::addColumn<QString>("activation");
    QTest::newRow("erf, Div 1.4142, (x·e)·0.5") << "erf0"
                                                << "Gelu";
    QTest::newRow("erf, Mul 0.7071, (0.5·x)·e") << "erf1"
                                                << "Gelu";
    QTest::newRow("tanh, x·(e·0.5)") << "tanh"
                                     << "GeluTanh";
    QTest::newRow("ONNX Gelu (opset 20), tanh") << "onnx"
                                                << "GeluTanh";
    QTest::newRow("com.microsoft:Gelu") << "msgelu"
                                        << "Gelu";
    QTest::newRow("com.microsoft:FastGelu with its bias") << "fastgelu"
                                                          << "GeluTanh";
  }
  void matMulAddGeluFusesEveryGeluForm() {
    QFETCH(QString, form);
    QFETCH(QString, activation);
    MatMulGraph t;
    Value* b = t.bias();
    const std::string f = form.toStdString();
    Value* x = f == "fastgelu" ? t.product : t.op("Add", {t.product, b}, "x");
    Value* y = nullptr;
    if (f.starts_with("erf")) y = erfGelu(t, x, f == "erf1");
    if (f == "tanh") y = tanhGelu(t, x);
    if (f == "msgelu") y = t.op("Gelu", {x}, "gelu", "com.microsoft");
    if (f == "fastgelu") y = t.op("FastGelu", {x, b}, "gelu", "com.microsoft");
    if (f == "onnx") {
      t.m->opsets[""] = 20;
      Node* n = t.g->addNode("Gelu", {x}, {"gelu"}, "gelu");
      n->setAttr("approximate", Attribute(std::string("tanh")));
      y = n->output(0);
    }
    t.m->opsets["com.microsoft"] = 1;
    t.finish(y);
    const PassResult r = runFusion(*t.m);
    QCOMPARE(counter(r, "MatMulAddGeluFusion"), 1);
    QCOMPARE(counter(r, "MatMulBiasAddFusion"), 0);  // the bigger pattern took the Add first
    Node* fused = only(*t.g);
    QVERIFY(fused);
    QCOMPARE(fused->qualifiedType(), std::string("kiln:FusedMatMul"));
    QCOMPARE(fused->attrString("activation", ""), activation.toStdString());
    QCOMPARE(fused->input(2), b);
    QCOMPARE(fused->output(0)->name(), std::string("gelu"));
    QCOMPARE(problems(*t.m), QString());
  }

  void geluFusionTakesAStandaloneGelu() {
    for (const bool tanhForm : {false, true}) {
      MatMulGraph t;
      t.g->eraseNode(t.matmul);  // no MatMul here (and no kernel for it yet)
      Value* x = t.g->addInput("x", f32({2, 3, 5}));
      t.finish(tanhForm ? tanhGelu(t, x) : erfGelu(t, x, 0));
      PassResult r;
      const double diff = fuseAndCompare(*t.m, &r);
      QCOMPARE(counter(r, "GeluFusion"), 1);
      QCOMPARE(counter(r, "MatMulAddGeluFusion"), 0);
      QCOMPARE(count(*t.g, "kiln:Gelu"), 1);
      QVERIFY2(diff >= 0 && diff < 1e-5, qPrintable(QString::number(diff)));
      QCOMPARE(problems(*t.m), QString());
    }
  }

  // x + bias, then GELU as x·0.5·(1 + Tanh((√(2/π)·x)·(1 + 0.044715·x²))) (the factored form some exporters write).
  void geluFusionTakesABiasAndTheFactoredTanhForm() {
    MatMulGraph t;
    t.g->eraseNode(t.matmul);
    Value* in = t.g->addInput("x", f32({2, 3, 5}));
    Value* x = t.op("Add", {in, t.bias()}, "biased");
    Value* sq = t.op("Mul", {x, t.op("Mul", {x, t.c("k", 0.044715)}, "kx")}, "ksq");
    Value* factor = t.op("Add", {sq, t.c("one_a", 1.0)}, "factor");
    Value* arg = t.op("Mul", {t.op("Mul", {x, t.c("s", std::sqrt(2.0 / std::numbers::pi))}, "sx"), factor}, "arg");
    Value* e = t.op("Add", {t.op("Tanh", {arg}, "th"), t.c("one_b", 1.0)}, "e");
    t.finish(t.op("Mul", {t.op("Mul", {x, t.c("half", 0.5)}, "hx"), e}, "gelu"));
    PassResult r;
    const double diff = fuseAndCompare(*t.m, &r);
    QCOMPARE(counter(r, "GeluFusion"), 1);
    Node* fused = only(*t.g);
    QVERIFY(fused);
    QCOMPARE(fused->qualifiedType(), std::string("kiln:Gelu"));
    QCOMPARE(fused->attrString("approximate", ""), std::string("tanh"));
    QCOMPARE(fused->input(0), in);
    QCOMPARE(fused->numInputs(), size_t(2));
    QVERIFY2(diff >= 0 && diff < 1e-5, qPrintable(QString::number(diff)));
    QCOMPARE(problems(*t.m), QString());
  }

  // ONNX's Gelu (opset 20) takes a preceding bias Add; alone it is already one op and stays.
  void geluFusionJoinsABiasToOnnxGelu() {
    for (const bool withBias : {true, false}) {
      auto m = newModel(20);
      Graph& g = *m->graph;
      Value* x = g.addInput("x", f32({2, 3, 5}));
      if (withBias)
        x = g.addNode("Add", {x, g.addInput("b", f32({5}))}, {"biased"}, "add")->output(0);
      Node* gelu = g.addNode("Gelu", {x}, {"y"}, "gelu");
      gelu->setAttr("approximate", Attribute(std::string("tanh")));
      g.addOutput(gelu->output(0));
      inferShapes(*m);
      QCOMPARE(counter(runFusion(*m), "GeluFusion"), int64_t(withBias));
      QCOMPARE(count(g, "kiln:Gelu"), int(withBias));
      if (withBias) QCOMPARE(only(g)->attrString("approximate", ""), std::string("tanh"));
      QCOMPARE(problems(*m), QString());
    }
  }

  void matMulAddGeluLeavesWhatItCannotProve() {
    {  // x also read outside the GELU: MatMul+Add and the GELU stay apart
      MatMulGraph t;
      Value* x = t.op("Add", {t.product, t.bias()}, "x");
      t.g->addOutput(x);
      t.finish(erfGelu(t, x, 0));
      const PassResult r = runFusion(*t.m);
      QCOMPARE(counter(r, "MatMulAddGeluFusion"), 0);
      QCOMPARE(counter(r, "MatMulBiasAddFusion"), 1);
      QCOMPARE(counter(r, "GeluFusion"), 1);
    }
    {  // the 0.5 is 0.6: not GELU
      MatMulGraph t;
      Value* x = t.op("Add", {t.product, t.bias()}, "x");
      Value* e =
          t.op("Add", {t.op("Erf", {t.op("Div", {x, t.c("sqrt2", 1.4142135)}, "s")}, "erf"), t.c("one", 1)}, "e");
      t.finish(t.op("Mul", {t.op("Mul", {x, e}, "xe"), t.c("half", 0.6)}, "gelu"));
      const PassResult r = runFusion(*t.m);
      QCOMPARE(counter(r, "MatMulAddGeluFusion"), 0);
      QCOMPARE(counter(r, "GeluFusion"), 0);
    }
  }

  // ---- TransposeMatMulFusion ----
  void reshapeGemmReshapeBecomesABatchedMatMul() {
    for (bool transB : {false, true}) {
      GemmLinear t(transB);
      PassResult r;
      const double diff = fuseAndCompare(*t.m, &r);
      QCOMPARE(counter(r, "ReshapeGemmReshapeFusion"), 1);
      QCOMPARE(count(*t.g, "kiln:FusedMatMul"), 1);
      QCOMPARE(count(*t.g, "Reshape") + count(*t.g, "Gemm"), 0);
      Node* fused = nullptr;
      for (Node* n : t.g->nodes()) fused = n->opType() == "FusedMatMul" ? n : fused;
      QCOMPARE(fused->attrInt("trans_b", -1), int64_t(transB ? 1 : 0));
      QCOMPARE(fused->output(0)->name(), std::string("y"));
      QCOMPARE(problems(*t.m), QString());
      QVERIFY2(diff >= 0 && diff < 1e-5, qPrintable(QString::number(diff)));
    }
  }

  void reshapeGemmReshapeLeavesOtherShapes() {
    {  // the second Reshape does not give back x's leading axes
      GemmLinear t(false, {3, 2, 5});
      QCOMPARE(counter(runFusion(*t.m), "ReshapeGemmReshapeFusion"), 0);
    }
    {  // alpha scales the product: not a plain Linear
      GemmLinear t;
      t.gemm->setAttr("alpha", Attribute(2.0f));
      QCOMPARE(counter(runFusion(*t.m), "ReshapeGemmReshapeFusion"), 0);
    }
    {  // the flattened input has another reader
      GemmLinear t;
      t.g->addOutput(t.flatten->output(0));
      QCOMPARE(counter(runFusion(*t.m), "ReshapeGemmReshapeFusion"), 0);
    }
  }

  // ---- FlattenGemmFusion ----
  // A classifier on a pooled [N, C, 1, 1] activation becomes a 1x1 convolution and a Reshape: the same numbers, and
  // the compiled graph keeps the classifier in NC1HWC0 as GE's FullyConnection does (two TransData fewer).
  void flattenGemmBecomesAOneByOneConvolution() {
    for (const char* form : {"Flatten+Gemm", "Flatten+Gemm transB", "Reshape+MatMul"}) {
      const std::string f = form;
      auto m = newModel();
      Graph& g = *m->graph;
      Value* x = g.addInput("x", f32({2, 6, 1, 1}));
      Node* flat = f.starts_with("Flatten")
                       ? g.addNode("Flatten", {x}, {"flat"}, "flatten")
                       : g.addNode("Reshape", {x, g.addInitializer("shape", Tensor::fromVector(DType::Int64, {2}, std::vector<int64_t>{2, 6}))}, {"flat"}, "flatten");
      const bool transB = f.ends_with("transB");
      Value* w = g.addInitializer("W", testing::randomFloats(transB ? Dims{5, 6} : Dims{6, 5}, 11));
      Node* mm = f.ends_with("MatMul") ? g.addNode("MatMul", {flat->output(0), w}, {"logits"}, "fc")
                                       : g.addNode("Gemm", {flat->output(0), w, g.addInitializer("b", testing::randomFloats({5}, 12))}, {"logits"}, "fc");
      if (transB) mm->setAttr("transB", Attribute(int64_t{1}));
      g.addOutput(mm->output(0));
      inferShapes(*m);
      PassResult r;
      const double diff = fuseAndCompare(*m, &r);
      QCOMPARE(counter(r, "FlattenGemmFusion"), 1);
      QCOMPARE(count(g, "Conv"), 1);
      QCOMPARE(count(g, "Reshape"), 1);
      QCOMPARE(count(g, "Gemm") + count(g, "MatMul") + count(g, "Flatten"), 0);
      QCOMPARE(g.outputs()[0]->name(), std::string("logits"));
      QCOMPARE(g.outputs()[0]->type().shape.toString(), std::string("2×5"));
      QCOMPARE(problems(*m), QString());
      QVERIFY2(diff >= 0 && diff < 1e-5, qPrintable(QString("%1: %2").arg(form).arg(diff)));
    }
    {  // a pooled map that is not 1x1: a matrix product of more than the channels, left alone
      auto m = newModel();
      Graph& g = *m->graph;
      Value* x = g.addInput("x", f32({2, 3, 2, 1}));
      Node* flat = g.addNode("Flatten", {x}, {"flat"}, "flatten");
      Node* mm = g.addNode("Gemm", {flat->output(0), g.addInitializer("W", testing::randomFloats({6, 5}, 11))}, {"y"}, "fc");
      g.addOutput(mm->output(0));
      inferShapes(*m);
      QCOMPARE(counter(runFusion(*m), "FlattenGemmFusion"), 0);
    }
  }

  void transposeMatMulSetsFlags_data() {
    QTest::addColumn<int>("side");
    QTest::addColumn<QList<qlonglong>>("perm");
    QTest::addColumn<int>("rank");
    QTest::newRow("A [0,2,1]") << 0 << QList<qlonglong>{0, 2, 1} << 3;
    QTest::newRow("B [0,1,3,2]") << 1 << QList<qlonglong>{0, 1, 3, 2} << 4;
    QTest::newRow("B rank 2, no perm") << 1 << QList<qlonglong>{} << 2;
  }
  void transposeMatMulSetsFlags() {
    QFETCH(int, side);
    QFETCH(QList<qlonglong>, perm);
    QFETCH(int, rank);
    auto m = newModel();
    Graph& g = *m->graph;
    Dims lead(static_cast<size_t>(rank - 2), 2);
    auto dims = [&](int64_t r, int64_t c) {
      Dims d = lead;
      d.push_back(r);
      d.push_back(c);
      return d;
    };
    // op(A) is [.., 3, 4], op(B) [.., 4, 5]; the transposed side holds its operand the other way round.
    Value* a = g.addInput("a", f32(side == 0 ? dims(4, 3) : dims(3, 4)));
    Value* b = g.addInput("b", f32(side == 1 ? dims(5, 4) : dims(4, 5)));
    Node* t = g.addNode("Transpose", {side == 0 ? a : b}, {"t"}, "t");
    if (!perm.isEmpty()) t->setAttr("perm", Attribute(Dims(perm.begin(), perm.end())));
    Node* mm = g.addNode("MatMul", {side == 0 ? t->output(0) : a, side == 1 ? t->output(0) : b}, {"y"}, "mm");
    g.addOutput(mm->output(0));
    inferShapes(*m);
    const Shape want = mm->output(0)->type().shape;
    QCOMPARE(counter(runFusion(*m), "TransposeMatMulFusion"), 1);
    Node* fused = only(g);
    QVERIFY(fused);
    QCOMPARE(fused->qualifiedType(), std::string("kiln:FusedMatMul"));
    QCOMPARE(fused->attrInt("trans_a", 0), int64_t(side == 0));
    QCOMPARE(fused->attrInt("trans_b", 0), int64_t(side == 1));
    QCOMPARE(fused->input(0), a);
    QCOMPARE(fused->input(1), b);
    inferShapes(*m);
    QCOMPARE(fused->output(0)->type().shape, want);
    QCOMPARE(problems(*m), QString());
  }

  // Gemm(Transpose(A), B, C, transA=1, alpha=3): the Transpose folds into transA (now 0); alpha and C stay.
  void transposeMatMulFoldsIntoAGemm() {
    auto m = newModel();
    Graph& g = *m->graph;
    Value* a = g.addInput("a", f32({3, 4}));
    Value* t = g.addNode("Transpose", {a}, {"t"}, "t")->output(0);  // [4, 3]; transA reads it back as [3, 4]
    Node* gemm = g.addNode("Gemm", {t, g.addInput("b", f32({4, 5})), g.addInput("c", f32({5}))}, {"y"}, "gemm");
    gemm->setAttr("transA", Attribute(int64_t{1}));
    gemm->setAttr("alpha", Attribute(3.0f));
    g.addOutput(gemm->output(0));
    inferShapes(*m);
    const Shape want = gemm->output(0)->type().shape;
    QCOMPARE(counter(runFusion(*m), "TransposeMatMulFusion"), 1);
    Node* fused = only(g);
    QVERIFY(fused);
    QCOMPARE(fused->qualifiedType(), std::string("Gemm"));
    QCOMPARE(fused->attrInt("transA", -1), int64_t{0});
    QCOMPARE(fused->attrInt("transB", -1), int64_t{0});
    QCOMPARE(fused->attrFloat("alpha", 0), 3.0f);
    QCOMPARE(fused->input(0), a);
    QCOMPARE(fused->numInputs(), size_t(3));
    inferShapes(*m);
    QCOMPARE(fused->output(0)->type().shape, want);
    QCOMPARE(problems(*m), QString());
  }

  void transposeMatMulLeavesOtherPermsAndIntegers() {
    struct Case {
      Dims perm;
      DType type;
    };
    for (const Case& c : {Case{{1, 0, 2}, DType::Float}, Case{{2, 1, 0}, DType::Float}, Case{{0, 2, 1}, DType::Int32},
                          Case{{0, 2, 1}, DType::Int64}}) {
      auto m = newModel();
      Graph& g = *m->graph;
      Value* a = g.addInput("a", ValueType::tensor(c.type, Shape::ofStatic({4, 4, 4})));
      Value* b = g.addInput("b", ValueType::tensor(c.type, Shape::ofStatic({4, 4, 4})));
      Node* t = g.addNode("Transpose", {a}, {"t"}, "t");
      t->setAttr("perm", Attribute(c.perm));
      g.addOutput(g.addNode("MatMul", {t->output(0), b}, {"y"}, "mm")->output(0));
      inferShapes(*m);
      QCOMPARE(counter(runFusion(*m), "TransposeMatMulFusion"), 0);
      QCOMPARE(g.numNodes(), size_t(2));
    }
  }

  void transposeMatMulKeepsASharedTransposeAndJoinsAFusedMatMul() {
    MatMulGraph t;
    Value* at = t.g->addInput("at", f32({2, 4, 3}));
    Node* tr = t.g->addNode("Transpose", {at}, {"t"}, "t");
    tr->setAttr("perm", Attribute(Dims{0, 2, 1}));
    t.g->setNodeInput(t.matmul, 0, tr->output(0));
    t.g->addOutput(tr->output(0));  // read elsewhere: it stays
    t.finish(t.op("Add", {t.product, t.bias()}, "y"));
    const PassResult r = runFusion(*t.m);
    QCOMPARE(counter(r, "MatMulBiasAddFusion"), 1);
    QCOMPARE(counter(r, "TransposeMatMulFusion"), 1);
    QCOMPARE(t.g->numNodes(), size_t(2));
    QCOMPARE(count(*t.g, "Transpose"), 1);
    Node* fused = t.g->outputs()[1]->producer();
    QCOMPARE(fused->qualifiedType(), std::string("kiln:FusedMatMul"));
    QCOMPARE(fused->attrInt("trans_a", 0), int64_t(1));
    QCOMPARE(fused->input(0), at);
    QCOMPARE(fused->numInputs(), size_t(3));              // the bias stayed
    QCOMPARE(replacedNodeIds(*fused).size(), size_t(2));  // MatMul and Add; the Transpose is not replaced
    QCOMPARE(problems(*t.m), QString());
  }

  // ---- AddLayerNormFusion / AddRmsNormFusion ----
  void addNormFusesAndKeepsTheResidual_data() {
    QTest::addColumn<bool>("rms");
    QTest::addColumn<bool>("residualRead");
    QTest::newRow("LayerNorm") << false << false;
    QTest::newRow("LayerNorm, sum read again") << false << true;
    QTest::newRow("RmsNorm") << true << false;
    QTest::newRow("RmsNorm, sum read again") << true << true;
  }
  void addNormFusesAndKeepsTheResidual() {
    QFETCH(bool, rms);
    QFETCH(bool, residualRead);
    auto m = newModel(13);
    Graph& g = *m->graph;
    Value* a = g.addInput("a", f32({2, 4, 8}));
    Value* b = g.addInput("b", f32({2, 4, 8}));
    Value* sum = g.addNode("Add", {b, a}, {"sum"}, "sum")->output(0);
    g.addOutput(layerNorm(g, sum, rms));
    if (residualRead) g.addOutput(g.addNode("Relu", {sum}, {"next"}, "next")->output(0));
    inferShapes(*m);
    PassResult r;
    const double diff = fuseAndCompare(*m, &r);
    const std::string rule = rms ? "AddRmsNormFusion" : "AddLayerNormFusion";
    QCOMPARE(counter(r, rms ? "RmsNormFusion" : "LayerNormFusion"), 1);
    QCOMPARE(counter(r, rule), 1);
    const std::string type = rms ? "kiln:AddRmsNorm" : "kiln:AddLayerNorm";
    QCOMPARE(count(g, type), 1);
    QCOMPARE(g.numNodes(), size_t(residualRead ? 2 : 1));
    Node* fused = g.outputs()[0]->producer();
    QCOMPARE(fused->qualifiedType(), type);
    QCOMPARE(fused->numInputs(), size_t(rms ? 3 : 4));
    QCOMPARE(fused->input(0), b);
    QCOMPARE(fused->numOutputs(), size_t(residualRead ? 2 : 1));
    if (residualRead) QCOMPARE(fused->output(1)->name(), std::string("sum"));
    QVERIFY2(diff >= 0 && diff < 1e-4, qPrintable(QString::number(diff)));
    QCOMPARE(problems(*m), QString());
  }

  void addNormLeavesBroadcastsAndComputedParameters() {
    {  // neither side has the sum's shape
      auto m = newModel(13);
      Graph& g = *m->graph;
      Value* a = g.addInput("a", f32({2, 1, 8}));
      Value* b = g.addInput("b", f32({1, 4, 8}));
      g.addOutput(layerNorm(g, g.addNode("Add", {a, b}, {"sum"}, "sum")->output(0), false));
      inferShapes(*m);
      const PassResult r = runFusion(*m);
      QCOMPARE(counter(r, "LayerNormFusion"), 1);
      QCOMPARE(counter(r, "AddLayerNormFusion"), 0);
    }
    {  // switched off
      auto m = newModel(13);
      Graph& g = *m->graph;
      Value* a = g.addInput("a", f32({2, 4, 8}));
      g.addOutput(layerNorm(g, g.addNode("Add", {a, a}, {"sum"}, "sum")->output(0), true));
      inferShapes(*m);
      Options o;
      o.set("fusion_switch=AddRmsNormFusion:off");
      const PassResult r = runFusion(*m, o);
      QCOMPARE(counter(r, "RmsNormFusion"), 1);
      QCOMPARE(counter(r, "AddRmsNormFusion"), 0);
      QCOMPARE(count(g, "Add"), 1);
    }
  }
};

QTEST_GUILESS_MAIN(FusionRulesTest)
#include "test_fusion_rules.moc"
