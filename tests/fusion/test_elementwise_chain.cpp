// ElementwiseChainFusion (UB fusion): which chains become one kiln:FusedElementwise, that its `body` computes what
// the chain computed (run through the reference kernels), and that the body survives what every graph goes through
// afterwards: the verifier, InferShape, the ONNX writer and reader, and the history recorder. The caps: 32 ops, the
// 256 KiB UB, static shapes, no outer-product broadcast, single-use intermediates.
#include <QtTest>
#include <filesystem>

#include "kernels/kernel.h"
#include "ir/fused_node.h"
#include "fusion/rules/builtin_rules.h"
#include "history/history_db.h"
#include "history/history_reader.h"
#include "history/history_recorder.h"
#include "io/onnx/onnx_reader.h"
#include "io/onnx/onnx_writer.h"
#include "ir/graph.h"
#include "ir/model.h"
#include "ir/opdefs/shape_inference.h"
#include "fusion/graph_fusion_pass.h"
#include "passes/pass_manager.h"
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

PassResult runUbFusion(Model& m) {
  return testing::runPass(*makeGraphFusionPass({makeElementwiseChainFusion()}, "UBFusion"), m);
}

std::vector<Node*> fusedNodes(const Graph& g) {
  std::vector<Node*> out;
  for (Node* n : g.nodes())
    if (n->qualifiedType() == "kiln:FusedElementwise") out.push_back(n);
  return out;
}

const Graph& bodyOf(const Node& n) { return **n.attr("body")->get<Attribute::GraphPtr>(); }

// x [2,4,8] -> Add(x, bias[8]) -> Mul(·, 0.5) -> Relu -> Sigmoid(·) · x (SiLU-like tail) -> Clip(·, 0, max) -> y
struct Chain {
  std::unique_ptr<Model> m = std::make_unique<Model>();
  Value* x = nullptr;
  Node* relu = nullptr;
  Chain() {
    m->opsets[""] = 17;
    Graph& g = *m->graph;
    x = g.addInput("x", f32({2, 4, 8}));
    Value* a = g.addNode("Add", {x, g.addInitializer("bias", pattern({8}, 1))}, {"a"}, "add")->output(0);
    Value* b = g.addNode("Mul", {a, g.addInitializer("half", floats({}, {0.5}))}, {"b"}, "mul")->output(0);
    relu = g.addNode("Relu", {b}, {"c"}, "relu");
    Value* s = g.addNode("Sigmoid", {relu->output(0)}, {"s"}, "sigmoid")->output(0);
    Value* t = g.addNode("Mul", {s, x}, {"t"}, "gate")->output(0);
    // Clip without its min input: an omitted optional input must survive into the body as omitted.
    Value* y = g.addNode("Clip", {t, nullptr, g.addInitializer("max", floats({}, {0.75}))}, {"y"}, "clip")->output(0);
    g.addOutput(y);
    inferShapes(*m);
  }
};

// x [n] -> Add(·, a_1) -> ... -> Add(·, a_count) -> y, every a_i a full-size input.
std::unique_ptr<Model> addChain(int count, int64_t n) {
  auto m = std::make_unique<Model>();
  m->opsets[""] = 17;
  Graph& g = *m->graph;
  Value* v = g.addInput("x", f32({n}));
  for (int i = 1; i <= count; ++i)
    v = g.addNode("Add", {v, g.addInput("a" + std::to_string(i), f32({n}))}, {"s" + std::to_string(i)})->output(0);
  g.addOutput(v);
  inferShapes(*m);
  return m;
}

}  // namespace

class ElementwiseChainTest : public QObject {
  Q_OBJECT
 private slots:
  void chainBecomesOneKernelThatComputesTheSame() {
    Chain t;
    Graph& g = *t.m->graph;
    const std::vector<Tensor> in{pattern({2, 4, 8}, 2)};
    const Tensor expected = testing::evaluateGraph(g, in).at(0);
    const PassResult r = runUbFusion(*t.m);
    QCOMPARE(counter(r, "ElementwiseChainFusion"), 1);
    QCOMPARE(problems(*t.m), QString());
    QCOMPARE(g.numNodes(), size_t(1));
    Node* fused = fusedNodes(g).at(0);
    QVERIFY(fused->attr("ops") && fused->attr("ops")->get<std::vector<std::string>>());
    QCOMPARE(*fused->attr("ops")->get<std::vector<std::string>>(),
             (std::vector<std::string>{"Add", "Mul", "Relu", "Sigmoid", "Mul", "Clip"}));
    QCOMPARE(replacedNodeIds(*fused).size(), size_t(6));
    // Inputs in first-read order: x, bias, half, max (x read twice, listed once).
    QCOMPARE(fused->numInputs(), size_t(4));
    QCOMPARE(fused->input(0), t.x);
    const Graph& body = bodyOf(*fused);
    QCOMPARE(body.inputs().size(), fused->numInputs());
    QCOMPARE(body.outputs().size(), size_t(1));
    QCOMPARE(body.numNodes(), size_t(6));
    QCOMPARE(body.owner(), fused);
    for (size_t i = 0; i < body.inputs().size(); ++i) QCOMPARE(body.inputs()[i]->type(), fused->input(i)->type());
    for (const Node* n : body.nodes())
      for (const Value* v : n->inputs()) QVERIFY2(!v || v->graph() == &body, "the body captures an outer value");
    const Node* clip = *std::prev(body.nodes().end());
    QCOMPARE(clip->opType(), std::string("Clip"));
    QVERIFY(clip->input(1) == nullptr);
    // Five [2,4,8] fp32 intermediates (a, b, c, s, t; 256 B each), written once and read once.
    QCOMPARE(fused->annotation("fusion.hbm_bytes_saved"), std::to_string(5 * 256 * 2));
    // The body, run by the reference kernels, gives what the chain gave.
    QCOMPARE(testing::maxAbsDiff(testing::evaluateGraph(g, in).at(0), expected), 0.0);
    // InferShape walks past it and keeps the output type.
    inferShapes(*t.m);
    QCOMPARE(fused->output(0)->type(), f32({2, 4, 8}));
    QCOMPARE(problems(*t.m), QString());
  }

  void bodySurvivesWriterReaderAndHistory() {
    Chain t;
    const std::string dir = std::string(KILN_TEST_TMP) + "/ub_fusion";
    std::filesystem::create_directories(dir);
    const std::string db = dir + "/chain.kiln";
    std::filesystem::remove(db);
    HistoryDb history(db);
    HistoryRecorder rec(history, "chain.onnx");
    PassManager pm;
    pm.add(Stage::Optimize, makeGraphFusionPass({makeElementwiseChainFusion()}, "UBFusion"));
    pm.addObserver(&rec);
    const RunSummary s = pm.run(*t.m, Options());
    QCOMPARE(int(s.status), int(RunStatus::Ok));  // the verifier ran after the pass
    QVERIFY2(rec.error().empty(), rec.error().c_str());
    const Node* fused = fusedNodes(*t.m->graph).at(0);
    const GraphSnapshot snap = HistoryReader(history).graphAt(rec.runId(), 1);
    int inBody = 0;
    for (const NodeRow& n : snap.nodes) inBody += n.graphOwner == fused->id() && n.graphAttr == "body";
    QCOMPARE(inBody, 6);

    // ONNX and back: the body is a GraphProto attribute; the re-read model verifies and infers.
    const std::string bytes = writeOnnxBytes(*t.m);
    OnnxImport back = readOnnxBytes(bytes, "chain", dir);
    inferShapes(*back.model);
    QCOMPARE(problems(*back.model), QString());
    const auto again = fusedNodes(*back.model->graph);
    QCOMPARE(again.size(), size_t(1));
    QCOMPARE(bodyOf(*again[0]).numNodes(), size_t(6));
    QCOMPARE(again[0]->output(0)->type(), f32({2, 4, 8}));
  }

  void sharedIntermediateEndsTheChain() {
    // c (the Relu output) is also a graph output: the chain splits there into add·mul·relu and sigmoid·mul·clip.
    Chain t;
    t.m->graph->addOutput(t.relu->output(0));
    QCOMPARE(counter(runUbFusion(*t.m), "ElementwiseChainFusion"), 2);
    const auto fused = fusedNodes(*t.m->graph);
    QCOMPARE(fused.size(), size_t(2));
    QCOMPARE(*fused[0]->attr("ops")->get<std::vector<std::string>>(), (std::vector<std::string>{"Add", "Mul", "Relu"}));
    QCOMPARE(*fused[1]->attr("ops")->get<std::vector<std::string>>(),
             (std::vector<std::string>{"Sigmoid", "Mul", "Clip"}));
    QCOMPARE(problems(*t.m), QString());
  }

  void ubFootprintCutsLongChains() {
    // 20 Adds of full [4096] fp32 inputs. Per 2048-element tile: inputs and output double-buffered (16 KiB each),
    // intermediates 8 KiB: k ops need 16(k+1) + 8(k-1) + 16 = 24k + 24 KiB <= 256 KiB, so k <= 9: the chain
    // splits 9 + 9 + 2 from its end.
    auto m = addChain(20, 4096);
    QCOMPARE(counter(runUbFusion(*m), "ElementwiseChainFusion"), 3);
    std::vector<size_t> sizes;
    for (Node* n : fusedNodes(*m->graph)) sizes.push_back(bodyOf(*n).numNodes());
    QCOMPARE(sizes, (std::vector<size_t>{2, 9, 9}));
    QCOMPARE(problems(*m), QString());
  }

  void opCountCapsSmallChains() {
    // Tiny tensors fit the UB easily: the 32-op cap splits 40 Adds into 32 + 8.
    auto m = addChain(40, 4);
    QCOMPARE(counter(runUbFusion(*m), "ElementwiseChainFusion"), 2);
    std::vector<size_t> sizes;
    for (Node* n : fusedNodes(*m->graph)) sizes.push_back(bodyOf(*n).numNodes());
    QCOMPARE(sizes, (std::vector<size_t>{8, 32}));
  }

  void leavesWhatItCannotTile() {
    {  // a symbolic dim: the kernel's buffers have no known size
      auto m = std::make_unique<Model>();
      m->opsets[""] = 17;
      Graph& g = *m->graph;
      Value* x = g.addInput("x", ValueType::tensor(DType::Float, Shape({Dim::symbolic("n"), Dim::fixed(8)})));
      g.addOutput(g.addNode("Relu", {g.addNode("Neg", {x}, {"n1"})->output(0)}, {"y"})->output(0));
      inferShapes(*m);
      QCOMPARE(counter(runUbFusion(*m), "ElementwiseChainFusion"), 0);
    }
    {  // an outer product: [4,1] + [1,8] is larger than either input
      auto m = std::make_unique<Model>();
      m->opsets[""] = 17;
      Graph& g = *m->graph;
      Value* a = g.addNode("Neg", {g.addInput("a", f32({4, 1}))}, {"na"})->output(0);
      g.addOutput(g.addNode("Add", {a, g.addInput("b", f32({1, 8}))}, {"y"})->output(0));
      inferShapes(*m);
      QCOMPARE(counter(runUbFusion(*m), "ElementwiseChainFusion"), 0);
    }
    {  // a single op is not a chain
      auto m = addChain(1, 16);
      QCOMPARE(counter(runUbFusion(*m), "ElementwiseChainFusion"), 0);
    }
  }

  void residualAddReluInTheGeneratedResnet() {
    // Each of ResNet-50's 16 bottleneck blocks ends in Add(branch, shortcut) -> Relu: one two-op kernel per block.
    // (Without weights BatchNormalization stays and is no element-wise op, so nothing else chains.)
    SampleOptions so;
    so.weights = false;
    auto m = buildSample("resnet50", so);
    inferShapes(*m);
    testing::runPass(*makeGraphFusionPass(builtinFusionRules()), *m);
    QCOMPARE(counter(runUbFusion(*m), "ElementwiseChainFusion"), 16);
    for (Node* n : fusedNodes(*m->graph))
      QCOMPARE(*n->attr("ops")->get<std::vector<std::string>>(), (std::vector<std::string>{"Add", "Relu"}));
    QCOMPARE(problems(*m), QString());
  }

  void notAGraphFusionRule() {
    // UB fusion runs after engine placement in its own pass; GraphFusion's list must not contain it.
    for (const auto& r : builtinFusionRules()) QVERIFY(r->name() != "ElementwiseChainFusion");
    Chain t;
    QCOMPARE(counter(testing::runPass(*makeGraphFusionPass(builtinFusionRules()), *t.m), "ElementwiseChainFusion"), 0);
  }
};

QTEST_GUILESS_MAIN(ElementwiseChainTest)
#include "test_elementwise_chain.moc"
