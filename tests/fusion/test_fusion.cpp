// The fusion framework (fuseNodes, GraphFusion) and the built-in rules: what a fused node records (rule, the
// original node ids it replaced — also through a second fusion — and HBM bytes saved), that intermediates used
// outside a group are refused, that fusion_switch and oo_level O1 turn rules off, and ConvBiasAddFusion on the
// shapes that are and are not a per-channel bias.
#include <QtTest>
#include <cmath>

#include "kernels/kernel.h"
#include "ir/fused_node.h"
#include "fusion/rules/builtin_rules.h"
#include "ir/graph.h"
#include "ir/model.h"
#include "ir/opdefs/shape_inference.h"
#include "ir/verifier.h"
#include "fusion/graph_fusion_pass.h"
#include "options/options.h"
#include "samples/sample_models.h"
#include "support/fusion_test_support.h"

using namespace kiln;
using kiln::testing::counter;
using kiln::testing::f32;
using kiln::testing::floats;
using kiln::testing::runFusion;
using kiln::testing::problems;

namespace {

using Dims = std::vector<int64_t>;


// x[1,2,4,4] -> Conv(W[3,2,1,1], optional bias) -> Add(c) -> y (a graph output)
struct ConvAdd {
  std::unique_ptr<Model> m = std::make_unique<Model>();
  Node *conv = nullptr, *add = nullptr;
  ConvAdd(const Dims& cDims, const std::vector<double>& c, bool withBias) {
    m->opsets[""] = 17;
    Graph& g = *m->graph;
    Value* x = g.addInput("x", f32({1, 2, 4, 4}));
    Value* w = g.addInitializer("W", floats({3, 2, 1, 1}, {1, 0, 0, 1, 1, 1}));
    std::vector<Value*> in{x, w};
    if (withBias) in.push_back(g.addInitializer("B", floats({3}, {10, 20, 30})));
    conv = g.addNode("Conv", in, {"conv_out"}, "conv");
    add = g.addNode("Add", {conv->output(0), g.addInitializer("C", floats(cDims, c))}, {"y"}, "add");
    g.addOutput(add->output(0));
    inferShapes(*m);
  }
};

// x[2,4,8] -> written-out LayerNorm over `axes` (Pow or Mul form) [-> Mul(gamma[8]) -> Add(beta[8])] -> y
struct LayerNormGraph {
  std::unique_ptr<Model> m = std::make_unique<Model>();
  Value* d = nullptr;
  LayerNormGraph(bool mulForm, bool affine, std::vector<int64_t> axes = {-1}) {
    m->opsets[""] = 13;
    Graph& g = *m->graph;
    Value* x = g.addInput("x", f32({2, 4, 8}));
    Node* mean = g.addNode("ReduceMean", {x}, {"mean"}, "/ln/mean");
    mean->setAttr("axes", Attribute(axes));
    Node* sub = g.addNode("Sub", {x, mean->output(0)}, {"d"}, "/ln/sub");
    d = sub->output(0);
    Node* sq = mulForm ? g.addNode("Mul", {d, d}, {"sq"}, "/ln/sq")
                       : g.addNode("Pow", {d, g.addInitializer("two", floats({}, {2}))}, {"sq"}, "/ln/pow");
    Node* var = g.addNode("ReduceMean", {sq->output(0)}, {"var"}, "/ln/var");
    var->setAttr("axes", Attribute(axes));
    Node* add = g.addNode("Add", {var->output(0), g.addInitializer("eps", floats({}, {1e-5}))}, {"ve"}, "/ln/eps");
    Node* sqrt = g.addNode("Sqrt", {add->output(0)}, {"std"}, "/ln/sqrt");
    Node* div = g.addNode("Div", {d, sqrt->output(0)}, {"n"}, "/ln/div");
    Value* y = div->output(0);
    if (affine) {
      y = g.addNode("Mul", {y, g.addInitializer("gamma", floats({8}, std::vector<double>(8, 2.0)))}, {"scaled"},
                    "/ln/gamma")->output(0);
      y = g.addNode("Add", {y, g.addInitializer("beta", floats({8}, std::vector<double>(8, 0.5)))}, {"y"},
                    "/ln/beta")->output(0);
    }
    g.addOutput(y);
    inferShapes(*m);
  }
};

}  // namespace

class FusionTest : public QObject {
  Q_OBJECT
 private slots:
  void convBiasAddFusesPerChannelConstants_data() {
    QTest::addColumn<QList<qlonglong>>("dims");
    QTest::addColumn<bool>("withBias");
    QTest::newRow("[1,C,1,1]") << QList<qlonglong>{1, 3, 1, 1} << false;
    QTest::newRow("[C,1,1]") << QList<qlonglong>{3, 1, 1} << false;
    QTest::newRow("[C,1,1] onto an existing bias") << QList<qlonglong>{3, 1, 1} << true;
  }
  void convBiasAddFusesPerChannelConstants() {
    QFETCH(QList<qlonglong>, dims);
    QFETCH(bool, withBias);
    ConvAdd t(Dims(dims.begin(), dims.end()), {1, 2, 3}, withBias);
    const auto convId = t.conv->id(), addId = t.add->id();
    const PassResult r = runFusion(*t.m);
    QCOMPARE(counter(r, "ConvBiasAddFusion"), 1);
    QCOMPARE(problems(*t.m), QString());
    Graph& g = *t.m->graph;
    QCOMPARE(g.numNodes(), size_t(1));
    Node* fused = *g.nodes().begin();
    QCOMPARE(fused->opType(), std::string("Conv"));
    QCOMPARE(fused->annotation("fusion.rule"), std::string("ConvBiasAddFusion"));
    QCOMPARE(replacedNodeIds(*fused), (std::vector<int64_t>{int64_t(convId), int64_t(addId)}));
    // conv_out (1×3×4×4 fp32 = 192 bytes) was written once and read once.
    QCOMPARE(fused->annotation("fusion.hbm_bytes_saved"), std::string("384"));
    QCOMPARE(counter(r, "hbm_bytes_saved"), 384);
    QCOMPARE(fused->output(0)->name(), std::string("y"));
    QVERIFY(fused->output(0)->isGraphOutput());
    const std::vector<double> bias = fused->input(2)->constant()->toDouble();
    const std::vector<double> want = withBias ? std::vector<double>{11, 22, 33} : std::vector<double>{1, 2, 3};
    QCOMPARE(bias, want);
    // The replaced constants are gone: only x, W and the new bias remain besides the output.
    QCOMPARE(g.initializers().size(), size_t(2));
  }

  void convBiasAddLeavesWhatIsNotABias() {
    // [C] or [W] broadcast along the last (width) axis, not the channels; [1,1,4,4] is per pixel.
    for (const Dims& d : {Dims{3}, Dims{4}, Dims{1, 1, 4, 4}}) {
      ConvAdd t(d, std::vector<double>(static_cast<size_t>(d.size() == 1 ? d[0] : 16), 1.0), false);
      QCOMPARE(counter(runFusion(*t.m), "ConvBiasAddFusion"), 0);
      QCOMPARE(t.m->graph->numNodes(), size_t(2));
    }
    // The Conv output read by someone else as well must stay.
    ConvAdd t({1, 3, 1, 1}, {1, 2, 3}, false);
    t.m->graph->addOutput(t.conv->output(0));
    QCOMPARE(counter(runFusion(*t.m), "ConvBiasAddFusion"), 0);
  }

  void layerNormFusesWrittenOutForms_data() {
    QTest::addColumn<bool>("mulForm");
    QTest::addColumn<bool>("affine");
    QTest::newRow("Pow, gamma and beta") << false << true;
    QTest::newRow("Mul(d,d), gamma and beta") << true << true;
    QTest::newRow("Pow, no affine tail") << false << false;
  }
  void layerNormFusesWrittenOutForms() {
    QFETCH(bool, mulForm);
    QFETCH(bool, affine);
    LayerNormGraph t(mulForm, affine);
    const size_t before = t.m->graph->numNodes();
    const PassResult r = runFusion(*t.m);
    QCOMPARE(counter(r, "LayerNormFusion"), 1);
    QCOMPARE(t.m->graph->numNodes(), size_t(1));
    Node* ln = *t.m->graph->nodes().begin();
    QCOMPARE(ln->qualifiedType(), std::string("kiln:LayerNorm"));
    QCOMPARE(ln->attrInt("axis", 0), 2);
    QVERIFY(std::abs(ln->attrFloat("epsilon", 0) - 1e-5f) < 1e-9f);
    QCOMPARE(ln->numInputs(), affine ? size_t(3) : size_t(1));
    QCOMPARE(replacedNodeIds(*ln).size(), before);
    QVERIFY(ln->output(0)->isGraphOutput());
    QCOMPARE(ln->output(0)->type().shape, Shape::ofStatic({2, 4, 8}));
    QVERIFY(t.m->opsets.count("kiln"));  // the fused op's domain is imported
    QCOMPARE(problems(*t.m), QString());
    // Intermediates of 2×4×8 fp32 (256 B) or 2×4×1 (32 B), each written once and read by each consumer.
    QVERIFY(std::stoll(ln->annotation("fusion.hbm_bytes_saved")) > 0);
  }

  void layerNormLeavesOtherShapes() {
    {  // normalising over a middle axis is not LayerNorm's trailing-axes form
      LayerNormGraph t(false, true, {1});
      QCOMPARE(counter(runFusion(*t.m), "LayerNormFusion"), 0);
    }
    {  // the centred value is also read elsewhere: it must stay
      LayerNormGraph t(false, true);
      t.m->graph->addOutput(t.d);
      QCOMPARE(counter(runFusion(*t.m), "LayerNormFusion"), 0);
    }
  }

  void rmsNormFusesBothScalings_data() {
    QTest::addColumn<bool>("divForm");
    QTest::newRow("Mul(x, Reciprocal(Sqrt))") << false;
    QTest::newRow("Div(x, Sqrt)") << true;
  }
  void rmsNormFusesBothScalings() {
    QFETCH(bool, divForm);
    auto m = std::make_unique<Model>();
    m->opsets[""] = 13;
    Graph& g = *m->graph;
    Value* x = g.addInput("x", f32({2, 4, 8}));
    Node* sq = g.addNode("Pow", {x, g.addInitializer("two", floats({}, {2}))}, {"sq"});
    Node* var = g.addNode("ReduceMean", {sq->output(0)}, {"ms"});
    var->setAttr("axes", Attribute(std::vector<int64_t>{-1}));
    Node* add = g.addNode("Add", {var->output(0), g.addInitializer("eps", floats({}, {1e-6}))}, {"mse"});
    Node* sqrt = g.addNode("Sqrt", {add->output(0)}, {"rms"});
    Value* n = divForm ? g.addNode("Div", {x, sqrt->output(0)}, {"n"})->output(0)
                       : g.addNode("Mul", {x, g.addNode("Reciprocal", {sqrt->output(0)}, {"inv"})->output(0)}, {"n"})
                             ->output(0);
    Node* scale = g.addNode("Mul", {g.addInitializer("w", floats({8}, std::vector<double>(8, 1.5))), n}, {"y"});
    g.addOutput(scale->output(0));
    g.addOutput(x);  // x read outside the pattern as well: it is the fused node's input, so that is fine
    inferShapes(*m);
    const PassResult r = runFusion(*m);
    QCOMPARE(counter(r, "RmsNormFusion"), 1);
    QCOMPARE(counter(r, "LayerNormFusion"), 0);
    QCOMPARE(g.numNodes(), size_t(1));
    Node* rms = *g.nodes().begin();
    QCOMPARE(rms->qualifiedType(), std::string("kiln:RmsNorm"));
    QCOMPARE(rms->numInputs(), size_t(2));
    QCOMPARE(rms->input(0), x);
    QCOMPARE(problems(*m), QString());
  }

  void rmsNormInTheGeneratedLlama() {
    // Our LLaMA sample writes RMSNorm out the way HF exports do: two per layer and one at the end.
    SampleOptions so;
    so.layers = 2;
    so.weights = false;
    auto m = buildSample("llama", so);
    inferShapes(*m);
    QCOMPARE(counter(runFusion(*m), "RmsNormFusion"), 5);
    // Batch and sequence are symbolic: the intermediates' sizes are unknown and counted apart, never guessed. (With
    // --no-weights the gamma is a graph input, not a constant, so the Mul by it stays outside the fused node.)
    for (Node* n : m->graph->nodes())
      if (n->opType() == "RmsNorm") {
        QCOMPARE(n->annotation("fusion.hbm_bytes_saved"), std::string("0"));
        // Pow, ReduceMean, Add, Sqrt and Reciprocal outputs.
        QCOMPARE(n->annotation("fusion.hbm_unknown_tensors"), std::string("5"));
      }
    QCOMPARE(problems(*m), QString());
  }

  void switchesTurnRulesOff() {
    for (const char* setting : {"fusion_switch=ConvBiasAddFusion:off", "oo_level=O1", "fusion_switch=ALL:off"}) {
      ConvAdd t({1, 3, 1, 1}, {1, 2, 3}, false);
      Options o;
      o.set(setting);
      const PassResult r = runFusion(*t.m, o);
      QVERIFY2(!r.changed, setting);
      QCOMPARE(t.m->graph->numNodes(), size_t(2));
    }
    ConvAdd t({1, 3, 1, 1}, {1, 2, 3}, false);
    Options o;
    o.set("fusion_switch=ALL:off;ConvBiasAddFusion:on");
    QVERIFY(runFusion(*t.m, o).changed);
  }

  void refusedWhenAnIntermediateEscapes() {
    ConvAdd t({1, 3, 1, 1}, {1, 2, 3}, false);
    t.m->graph->addOutput(t.conv->output(0));
    FusedNodeSpec spec;
    spec.opType = "Conv";
    spec.inputs = {t.conv->input(0), t.conv->input(1)};
    spec.outputs = {t.add->output(0)};
    QVERIFY_THROWS_EXCEPTION(std::logic_error, fuseNodes({t.conv, t.add}, spec, "Test"));
    QCOMPARE(t.m->graph->numNodes(), size_t(2));  // untouched
  }

  void nestedFusionNamesTheOriginalNodes() {
    // Relu(Add(Conv)): ConvBiasAddFusion takes Conv+Add first, then ConvActivationFusion the fused Conv with the
    // Relu — the record names all three original nodes.
    ConvAdd t({1, 3, 1, 1}, {1, 2, 3}, false);
    Graph& g = *t.m->graph;
    Value* y = t.add->output(0);
    Node* relu = g.addNode("Relu", {y}, {"r"}, "relu");
    g.setOutputs({relu->output(0)});
    const std::vector<int64_t> all{int64_t(t.conv->id()), int64_t(t.add->id()), int64_t(relu->id())};
    const PassResult r = runFusion(*t.m);
    QCOMPARE(counter(r, "ConvBiasAddFusion"), 1);
    QCOMPARE(counter(r, "ConvActivationFusion"), 1);
    QCOMPARE(g.numNodes(), size_t(1));
    Node* both = *g.nodes().begin();
    QCOMPARE(both->qualifiedType(), std::string("kiln:FusedConv"));
    QCOMPARE(both->annotation("fusion.rule"), std::string("ConvActivationFusion"));
    QCOMPARE(replacedNodeIds(*both), all);
    QVERIFY(both->output(0)->isGraphOutput());
    QCOMPARE(both->output(0)->name(), std::string("r"));
  }
};

QTEST_GUILESS_MAIN(FusionTest)
#include "test_fusion.moc"
