// Norm forms Stage 1 leaves behind that the norm rules must still see (ONNX Runtime's fusion tests have them): an
// epsilon of 0 whose "+ 0" AlgebraicSimplification removed, and a ReduceMean with no axes (every axis).
#include <QtTest>

#include "fusion/rules/builtin_rules.h"
#include "ir/graph.h"
#include "ir/model.h"
#include "ir/opdefs/shape_inference.h"
#include "fusion/graph_fusion_pass.h"
#include "support/graph_eval.h"
#include "support/pass_test_support.h"

using namespace kiln;
using kiln::testing::counter;
using kiln::testing::f32;
using kiln::testing::floats;
using kiln::testing::problems;

namespace {

// x [2,3,4] -> [Sub(x, ReduceMean(x))] -> Pow 2 -> ReduceMean -> Sqrt -> Div -> y: no epsilon Add at all.
// `axes` empty: the ReduceMeans carry no axes (they reduce over every axis).
std::unique_ptr<Model> normWithoutEps(bool centred, const std::vector<int64_t>& axes) {
  auto m = std::make_unique<Model>();
  m->opsets[""] = 13;
  Graph& g = *m->graph;
  Value* x = g.addInput("x", f32({2, 3, 4}));
  auto reduceMean = [&](Value* in, const char* name) {
    Node* r = g.addNode("ReduceMean", {in}, {name});
    if (!axes.empty()) r->setAttr("axes", Attribute(axes));
    return r->output(0);
  };
  Value* d = centred ? g.addNode("Sub", {x, reduceMean(x, "mean")}, {"d"})->output(0) : x;
  Value* sq = g.addNode("Pow", {d, g.addInitializer("two", floats({}, {2}))}, {"sq"})->output(0);
  Value* root = g.addNode("Sqrt", {reduceMean(sq, "var")}, {"root"})->output(0);
  g.addOutput(g.addNode("Div", {d, root}, {"y"})->output(0));
  inferShapes(*m);
  return m;
}

PassResult runFusion(Model& m) { return testing::runPass(*makeGraphFusionPass(builtinFusionRules()), m); }

}  // namespace

class NormVariantsTest : public QObject {
  Q_OBJECT
 private slots:
  void layerNormWithEpsilonSimplifiedAway() {
    auto m = normWithoutEps(true, {-1});
    QCOMPARE(counter(runFusion(*m), "LayerNormFusion"), 1);
    QCOMPARE(m->graph->numNodes(), size_t(1));
    Node* ln = *m->graph->nodes().begin();
    QCOMPARE(ln->qualifiedType(), std::string("kiln:LayerNorm"));
    QCOMPARE(ln->attrFloat("epsilon", -1), 0.0f);
    QCOMPARE(ln->attrInt("axis", -1), int64_t(2));
    QCOMPARE(problems(*m), QString());
  }

  void rmsNormWithEpsilonSimplifiedAway() {
    auto m = normWithoutEps(false, {-1});
    QCOMPARE(counter(runFusion(*m), "RmsNormFusion"), 1);
    Node* rms = *m->graph->nodes().begin();
    QCOMPARE(rms->qualifiedType(), std::string("kiln:RmsNorm"));
    QCOMPARE(rms->attrFloat("epsilon", -1), 0.0f);
    QCOMPARE(problems(*m), QString());
  }

  void reduceMeanWithoutAxesNormalisesEverything() {
    auto m = normWithoutEps(true, {});
    QCOMPARE(counter(runFusion(*m), "LayerNormFusion"), 1);
    QCOMPARE((*m->graph->nodes().begin())->attrInt("axis", -1), int64_t(0));
    // Opset 18's noop_with_empty_axes turns "no axes" into no reduction at all: that is no norm.
    auto noop = normWithoutEps(true, {});
    noop->opsets[""] = 18;
    for (Node* n : noop->graph->nodes())
      if (n->opType() == "ReduceMean") n->setAttr("noop_with_empty_axes", Attribute(int64_t{1}));
    QCOMPARE(counter(runFusion(*noop), "LayerNormFusion"), 0);
  }
};

QTEST_GUILESS_MAIN(NormVariantsTest)
#include "test_norm_variants.moc"
