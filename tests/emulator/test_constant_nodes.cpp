// Nodes computed before the reference run (emulator/constant_nodes.h): which nodes count as constant (initializers
// only, transitively; not what reads a graph input), that the run reads their values instead of running them and
// gets the same bits, that the fp16 range watch still sees their outputs in order, and that a node whose kernel fails
// is left to the run, which reports it.
#include <QtTest>

#include <algorithm>
#include <cstring>

#include "emulator/constant_nodes.h"
#include "emulator/emulation.h"
#include "emulator/reference_executor.h"
#include "ir/model.h"

using namespace kiln;

namespace {

Tensor floats(std::vector<int64_t> dims, std::vector<float> v) { return Tensor::fromVector(DType::Float, std::move(dims), v); }
Tensor longs(std::vector<int64_t> dims, std::vector<int64_t> v) { return Tensor::fromVector(DType::Int64, std::move(dims), v); }

ValueType tensorType(DType type, std::vector<int64_t> dims) {
  std::vector<Dim> d;
  for (int64_t e : dims) d.push_back(Dim::fixed(e));
  return ValueType::tensor(type, Shape(std::move(d)));
}

bool sameBits(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.dims() == b.dims() && std::memcmp(a.data(), b.data(), a.byteSize()) == 0;
}

// y = Relu(x) * (ConstantOfShape([2, 3], 0.5) + k): a weight built from constants.
struct WeightFromConstants {
  Model m;
  Graph& g = *m.graph;
  Value* x = g.addInput("x", tensorType(DType::Float, {2, 3}));
  Node* fill = g.addNode("ConstantOfShape", {g.addInitializer("shape", longs({2}, {2, 3}))}, {"filled"}, "fill");
  Node* weight = g.addNode("Add", {fill->output(0), g.addInitializer("k", floats({3}, {1, 2, 3}))}, {"w"}, "weight");
  Node* relu = g.addNode("Relu", {x}, {"r"}, "relu");
  WeightFromConstants() {
    fill->setAttr("value", Attribute(floats({1}, {0.5f})));
    g.addOutput(g.addNode("Mul", {relu->output(0), weight->output(0)}, {"y"}, "scale")->output(0));
  }
};

}  // namespace

class ConstantNodesTest : public QObject {
  Q_OBJECT
 private slots:
  void onlyNodesOfConstantsAreComputed() {
    WeightFromConstants f;
    const ReferenceExecutor exec;
    const auto ahead = computeConstantNodes(f.g, exec);
    QCOMPARE(ahead->nodes.size(), size_t(2));
    QVERIFY(ahead->nodes.count(f.fill) && ahead->nodes.count(f.weight));
    const Tensor& w = ahead->values.at(f.weight->output(0));
    QCOMPARE(w.toDouble(), (std::vector<double>{1.5, 2.5, 3.5, 1.5, 2.5, 3.5}));
  }

  void aRunReadingThemGivesTheSameBits() {
    WeightFromConstants f;
    const std::vector<Tensor> in{floats({2, 3}, {1, -2, 3, 0.25f, 5, -6})};
    const std::vector<Tensor> plain = ReferenceExecutor().run(f.g, in);
    ExecutionOptions options;
    options.constants = computeConstantNodes(f.g, ReferenceExecutor());
    // The watch sees every node's outputs, the computed ones too, in the graph's order.
    std::vector<std::string> seen;
    options.afterNode = [&](const Node& n, const std::vector<Tensor>& out) {
      QVERIFY(!out.empty() && out[0].valid());
      seen.push_back(n.name());
    };
    const std::vector<Tensor> ahead = ReferenceExecutor(options).run(f.g, in);
    QCOMPARE(ahead.size(), plain.size());
    QVERIFY(sameBits(ahead[0], plain[0]));
    QCOMPARE(seen.size(), size_t(4));
    QVERIFY(std::find(seen.begin(), seen.end(), "weight") < std::find(seen.begin(), seen.end(), "scale"));
  }

  void runReferenceComputesThemBeforeItsClock() {
    WeightFromConstants f;
    const ReferenceRun run = runReference(f.m, {floats({2, 3}, {1, 1, 1, 1, 1, 1})});
    QVERIFY(run.prepareMs > 0);
    QCOMPARE(run.outputs[0].toDouble(), (std::vector<double>{1.5, 2.5, 3.5, 1.5, 2.5, 3.5}));
  }

  void theRunReadsTheValuesInsteadOfRunningTheNodes() {
    // Values given for the nodes (here not what they compute) are what the run uses.
    WeightFromConstants f;
    auto given = std::make_shared<ConstantNodes>();
    given->nodes = {f.fill, f.weight};
    given->values.emplace(f.fill->output(0), floats({2, 3}, {0, 0, 0, 0, 0, 0}));
    given->values.emplace(f.weight->output(0), floats({2, 3}, {1, 1, 1, 1, 1, 1}));
    ExecutionOptions options;
    options.constants = given;
    const std::vector<Tensor> y = ReferenceExecutor(options).run(f.g, {floats({2, 3}, {1, -2, 3, 4, -5, 6})});
    QCOMPARE(y[0].toDouble(), (std::vector<double>{1, 0, 3, 4, 0, 6}));
  }

  void aFailingNodeIsLeftToTheRun() {
    // Reshape of 6 constant elements to [4]: the kernel refuses; computing ahead skips it and the run names it.
    Model m;
    Graph& g = *m.graph;
    Value* x = g.addInput("x", tensorType(DType::Float, {4}));
    Node* bad = g.addNode("Reshape", {g.addInitializer("six", floats({6}, {1, 2, 3, 4, 5, 6})),
                                      g.addInitializer("to", longs({1}, {4}))}, {"r"}, "bad_reshape");
    g.addOutput(g.addNode("Add", {x, bad->output(0)}, {"y"}, "y")->output(0));
    QVERIFY(computeConstantNodes(g, ReferenceExecutor())->nodes.empty());
    try {
      runReference(m, {floats({4}, {0, 0, 0, 0})});
      QFAIL("the run should fail");
    } catch (const std::exception& e) {
      QVERIFY2(std::string(e.what()).find("bad_reshape") != std::string::npos || std::string(e.what()).find("Reshape") != std::string::npos, e.what());
    }
  }
};

QTEST_APPLESS_MAIN(ConstantNodesTest)
#include "test_constant_nodes.moc"
