// Conv chains (emulator/conv_chains.h, kernels/conv_followers.h): which nodes the reference mode runs with their
// Conv, and that a chain gives the same bits as its nodes run one by one — BatchNormalization, per-channel Mul and
// Add on either side, Relu, Clip; grouped, depthwise and pointwise convolutions, a bias, double precision, an image
// large enough that the convolution runs in bands. Chains that must not form (a value also read elsewhere or given
// as an output) and chains the operands decline at run time (an Add of a whole tensor) run node by node.
#include <QtTest>

#include <algorithm>
#include <cstring>

#include "emulator/conv_chains.h"
#include "emulator/reference_executor.h"
#include "ir/model.h"
#include "kernels/conv_followers.h"

using namespace kiln;

namespace {

// Deterministic values in [-1, 1) of `type` (Float or Double).
Tensor values(DType type, std::vector<int64_t> dims, uint32_t seed) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<double> v(static_cast<size_t>(n));
  uint32_t state = seed * 2654435761u + 1;
  for (double& x : v) {
    state = state * 1664525u + 1013904223u;
    x = static_cast<double>(state >> 8) / double(1u << 24) * 2.0 - 1.0;
  }
  return Tensor::fromVector(type, std::move(dims), v);
}

Tensor positive(DType type, std::vector<int64_t> dims, uint32_t seed) {
  Tensor t = values(type, dims, seed);
  std::vector<double> v = t.toDouble();
  for (double& x : v) x = 0.5 + std::abs(x);
  return Tensor::fromVector(type, std::move(dims), v);
}

struct ConvSpec {
  int64_t in = 8, out = 16, group = 1, kernel = 3, stride = 1, pad = 1, size = 12;
  bool bias = true;
};

Node* addConv(Graph& g, Value* x, const ConvSpec& c, DType type, const std::string& name) {
  std::vector<Value*> in{x, g.addInitializer(name + "_w", values(type, {c.out, c.in / c.group, c.kernel, c.kernel}, 7))};
  if (c.bias) in.push_back(g.addInitializer(name + "_b", values(type, {c.out}, 11)));
  Node* conv = g.addNode("Conv", in, {name + "_y"}, name);
  conv->setAttr("kernel_shape", Attribute(std::vector<int64_t>{c.kernel, c.kernel}));
  conv->setAttr("strides", Attribute(std::vector<int64_t>{c.stride, c.stride}));
  conv->setAttr("pads", Attribute(std::vector<int64_t>{c.pad, c.pad, c.pad, c.pad}));
  conv->setAttr("group", Attribute(c.group));
  return conv;
}

Node* addBatchNorm(Graph& g, Value* x, int64_t channels, DType type, const std::string& name) {
  return g.addNode("BatchNormalization",
                   {x, g.addInitializer(name + "_s", values(type, {channels}, 3)),
                    g.addInitializer(name + "_b", values(type, {channels}, 4)),
                    g.addInitializer(name + "_m", values(type, {channels}, 5)),
                    g.addInitializer(name + "_v", positive(type, {channels}, 6))},
                   {name + "_y"}, name);
}

// The graph run as it is (chains) and with an afterNode hook (which turns chains off): the same bits.
void expectSameBitsAsNodeByNode(const Model& m, const std::vector<Tensor>& inputs) {
  const std::vector<Tensor> chained = ReferenceExecutor().run(*m.graph, inputs);
  ExecutionOptions oneByOne;
  oneByOne.afterNode = [](const Node&, const std::vector<Tensor>&) {};
  const std::vector<Tensor> plain = ReferenceExecutor(oneByOne).run(*m.graph, inputs);
  QCOMPARE(chained.size(), plain.size());
  for (size_t i = 0; i < chained.size(); ++i) {
    QCOMPARE(chained[i].dims(), plain[i].dims());
    QCOMPARE(chained[i].dtype(), plain[i].dtype());
    QVERIFY2(std::memcmp(chained[i].data(), plain[i].data(), static_cast<size_t>(plain[i].byteSize())) == 0,
             ("output " + std::to_string(i) + " differs").c_str());
  }
}

size_t chainLength(const Graph& g, const std::string& convName) {
  const auto order = g.topologicalOrder();
  for (const auto& [conv, chain] : planConvChains(g, *order))
    if (conv->name() == convName) return chain.followers.size();
  return 0;
}

ValueType tensorType(DType type, std::vector<int64_t> dims) {
  std::vector<Dim> d;
  for (int64_t e : dims) d.push_back(Dim::fixed(e));
  return ValueType::tensor(type, Shape(std::move(d)));
}

// A model with input x [1, C, size, size], Conv `name` and a BatchNormalization after it, for the tests to extend.
struct ConvBatchNorm {
  Model m;
  Graph& g = *m.graph;
  ConvSpec c;
  Value* x;
  Node* conv;
  Node* bn;
  explicit ConvBatchNorm(const ConvSpec& spec = {}, const std::string& name = "conv")
      : c(spec),
        x(g.addInput("x", tensorType(DType::Float, {1, c.in, c.size, c.size}))),
        conv(addConv(g, x, c, DType::Float, name)),
        bn(addBatchNorm(g, conv->output(0), c.out, DType::Float, name + "_bn")) {}
  Tensor input(uint32_t seed) const { return values(DType::Float, {1, c.in, c.size, c.size}, seed); }
};

}  // namespace

class ConvChainsTest : public QObject {
  Q_OBJECT
 private slots:
  void batchNormAndReluFollowAConv() {
    for (DType type : {DType::Float, DType::Double}) {
      Model m;
      Graph& g = *m.graph;
      const ConvSpec c;
      Value* x = g.addInput("x", tensorType(type, {2, c.in, c.size, c.size}));
      Node* conv = addConv(g, x, c, type, "conv");
      Node* bn = addBatchNorm(g, conv->output(0), c.out, type, "bn");
      g.addOutput(g.addNode("Relu", {bn->output(0)}, {"y"}, "relu")->output(0));
      QCOMPARE(chainLength(g, "conv"), size_t(2));
      expectSameBitsAsNodeByNode(m, {values(type, {2, c.in, c.size, c.size}, 1)});
    }
  }

  void depthwiseConvWithClip() {
    Model m;
    Graph& g = *m.graph;
    ConvSpec c;
    c.in = c.out = c.group = 12;
    c.stride = 2;
    c.bias = false;
    Value* x = g.addInput("x", tensorType(DType::Float, {1, c.in, c.size, c.size}));
    Node* conv = addConv(g, x, c, DType::Float, "dw");
    Node* bn = addBatchNorm(g, conv->output(0), c.out, DType::Float, "bn");
    Node* clip = g.addNode("Clip", {bn->output(0), g.addInitializer("lo", Tensor::fromVector(DType::Float, {}, std::vector<double>{0})),
                                    g.addInitializer("hi", Tensor::fromVector(DType::Float, {}, std::vector<double>{0.5}))},
                           {"y"}, "clip");
    g.addOutput(clip->output(0));
    QCOMPARE(chainLength(g, "dw"), size_t(2));
    expectSameBitsAsNodeByNode(m, {values(DType::Float, {1, c.in, c.size, c.size}, 2)});
  }

  // Pointwise and grouped: Mul with the chain on the right, Add by a [1, C, 1, 1] tensor, Relu.
  void perChannelMulAndAddOnEitherSide() {
    Model m;
    Graph& g = *m.graph;
    ConvSpec c;
    c.kernel = 1;
    c.pad = 0;
    c.group = 2;
    Value* x = g.addInput("x", tensorType(DType::Float, {1, c.in, c.size, c.size}));
    Node* conv = addConv(g, x, c, DType::Float, "pw");
    Node* mul = g.addNode("Mul", {g.addInitializer("k", values(DType::Float, {c.out, 1, 1}, 8)), conv->output(0)}, {"scaled"});
    Node* add = g.addNode("Add", {mul->output(0), g.addInitializer("s", values(DType::Float, {1, c.out, 1, 1}, 9))}, {"shifted"});
    g.addOutput(g.addNode("Relu", {add->output(0)}, {"y"})->output(0));
    QCOMPARE(chainLength(g, "pw"), size_t(3));
    expectSameBitsAsNodeByNode(m, {values(DType::Float, {1, c.in, c.size, c.size}, 3)});
  }

  // Inception v2's exports scale after BatchNormalization by Unsqueeze(per-channel vector), the Unsqueeze placed
  // after the Conv: it runs ahead of the chain.
  void operandMadeAfterTheConvRunsEarly() {
    ConvBatchNorm t;
    auto& [m, g, c, x, conv, bn] = t;
    Node* unsqueeze = g.addNode("Unsqueeze", {g.addInitializer("k", values(DType::Float, {c.out}, 12)),
                                              g.addInitializer("axes", Tensor::fromVector(DType::Int64, {2}, std::vector<int64_t>{1, 2}))},
                                {"k3"}, "unsqueeze");
    Node* mul = g.addNode("Mul", {bn->output(0), unsqueeze->output(0)}, {"scaled"});
    g.addOutput(g.addNode("Relu", {mul->output(0)}, {"y"})->output(0));
    const auto order = g.topologicalOrder();
    QVERIFY(std::find(order->begin(), order->end(), conv) < std::find(order->begin(), order->end(), unsqueeze));
    const auto chains = planConvChains(g, *order);
    QCOMPARE(chains.at(conv).followers.size(), size_t(3));
    QCOMPARE(chains.at(conv).early, std::vector<const Node*>{unsqueeze});
    expectSameBitsAsNodeByNode(m, {t.input(13)});
  }

  // 64 channels of 3×3 taps over 128×128: more than one im2col band.
  void bandedConvolution() {
    ConvSpec spec;
    spec.in = 64;
    spec.size = 128;
    ConvBatchNorm t(spec, "big");
    t.g.addOutput(t.g.addNode("Relu", {t.bn->output(0)}, {"y"})->output(0));
    expectSameBitsAsNodeByNode(t.m, {t.input(4)});
  }

  // A pointwise convolution large enough for the tiled GEMM (kernels/sgemm_tiles.h) and a 3×3 one whose columns are
  // gathered, with their followers: the bits of the nodes one by one, the channel count not a multiple of the
  // 12-row tiles.
  void tiledConvolutionsWithFollowers() {
    for (const int64_t kernel : {int64_t{1}, int64_t{3}}) {
      ConvSpec spec;
      spec.in = 40;
      spec.out = 30;
      spec.kernel = kernel;
      spec.pad = kernel / 2;
      spec.size = 64;
      ConvBatchNorm t(spec, "tiled");
      Node* clip = t.g.addNode("Clip", {t.bn->output(0)}, {"y"});
      clip->setAttr("min", Attribute(0.0f));
      clip->setAttr("max", Attribute(6.0f));
      t.g.addOutput(clip->output(0));
      QCOMPARE(chainLength(t.g, "tiled"), size_t(2));
      expectSameBitsAsNodeByNode(t.m, {t.input(3)});
    }
  }

  // A value read twice, or given as an output, stays a tensor of its own.
  void sharedValuesEndTheChain() {
    ConvBatchNorm t;
    auto& [m, g, c, x, conv, bn] = t;
    Node* relu = g.addNode("Relu", {bn->output(0)}, {"r"});
    Node* other = g.addNode("Sigmoid", {bn->output(0)}, {"s"});
    g.addOutput(relu->output(0));
    g.addOutput(other->output(0));
    QCOMPARE(chainLength(g, "conv"), size_t(1));  // bn only: its output has two readers
    Node* conv2 = addConv(g, x, c, DType::Float, "conv2");
    g.addOutput(conv2->output(0));
    g.addOutput(g.addNode("Relu", {conv2->output(0)}, {"r2"})->output(0));
    QCOMPARE(chainLength(g, "conv2"), size_t(0));  // its output is a graph output
    expectSameBitsAsNodeByNode(m, {t.input(5)});
  }

  // An Add of a whole tensor is planned (the shapes are known only at run time) but declined when it runs.
  // A ResNet block's end: Conv → BatchNormalization → Add(residual) → Relu. The Add's whole-tensor operand ends the
  // chain at run time; the Conv still takes the BatchNormalization, the Add and the Relu run on their own: the bits
  // of the nodes one by one.
  void chainEndsAtAWholeTensorOperand() {
    ConvBatchNorm t;
    Value* residual = t.g.addInput("r", tensorType(DType::Float, {1, t.c.out, t.c.size, t.c.size}));
    Node* add = t.g.addNode("Add", {t.bn->output(0), residual}, {"sum"});
    t.g.addOutput(t.g.addNode("Relu", {add->output(0)}, {"y"})->output(0));
    QCOMPARE(chainLength(t.g, "conv"), size_t(3));
    const Tensor in = t.input(2), r = values(DType::Float, {1, t.c.out, t.c.size, t.c.size}, 8);
    const std::vector<const Tensor*> convIn{&in, t.conv->input(1)->constant(), t.conv->input(2)->constant()};
    std::vector<kernels::ConvFollower> followers;
    followers.push_back({t.bn, {nullptr, t.bn->input(1)->constant(), t.bn->input(2)->constant(),
                                t.bn->input(3)->constant(), t.bn->input(4)->constant()}, 0});
    QVERIFY(kernels::convolveWithFollowers(*t.conv, convIn, followers, {}));  // the prefix the executor takes
    followers.push_back({add, {nullptr, &r}, 0});
    QVERIFY(!kernels::convolveWithFollowers(*t.conv, convIn, followers, {}));  // the whole chain: declined
    expectSameBitsAsNodeByNode(t.m, {in, r});
  }

  void wholeTensorOperandIsDeclinedAtRunTime() {
    Model m;
    Graph& g = *m.graph;
    const ConvSpec c;
    Value* x = g.addInput("x", tensorType(DType::Float, {1, c.in, c.size, c.size}));
    Node* conv = addConv(g, x, c, DType::Float, "conv");
    Value* residual = g.addInput("r", tensorType(DType::Float, {1, c.out, c.size, c.size}));
    Node* add = g.addNode("Add", {conv->output(0), residual}, {"y"});
    g.addOutput(add->output(0));
    QCOMPARE(chainLength(g, "conv"), size_t(1));
    const Tensor in = values(DType::Float, {1, c.in, c.size, c.size}, 6);
    const Tensor r = values(DType::Float, {1, c.out, c.size, c.size}, 7);
    const std::vector<const Tensor*> convIn{&in, conv->input(1)->constant(), conv->input(2)->constant()};
    QVERIFY(!kernels::convolveWithFollowers(*conv, convIn, {{add, {nullptr, &r}, 0}}, {}));
    expectSameBitsAsNodeByNode(m, {in, r});
  }
};

QTEST_GUILESS_MAIN(ConvChainsTest)
#include "test_conv_chains.moc"
