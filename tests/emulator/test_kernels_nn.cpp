// NN reference kernels: hand-computed cases per op (Conv padding/stride/group/dilation/auto_pad, ConvTranspose,
// MatMul broadcasting, Gemm transposes, pools, normalisations, both Softmax forms), fp16 rounding, the
// decline/throw contract, and each of Kiln's fused NN ops against the unfused ONNX sequence on random inputs.
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>

#include "support/kernel_op.h"
#include "kernels/conv_blocked.h"
#include "kernels/nn_kernels.h"
#include "kernels/pool_blocked.h"
#include "kernels/sgemm_tiles.h"
#include "kernels/conv_followers.h"
#include "kernels/kernel.h"
#include "kernels/vector_math.h"
#include "ir/graph.h"

using namespace kiln;
using namespace kiln::testing;

namespace {



Tensor f16(Dims dims, const std::vector<float>& v) {
  std::vector<uint16_t> bits;
  for (float e : v) bits.push_back(floatToHalf(e));
  return Tensor::fromVector(DType::Float16, std::move(dims), bits);
}
Tensor iota(Dims dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  return f32(std::move(dims), v);
}
Tensor randomTensor(Dims dims, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (float& e : v) e = u(rng);
  return f32(std::move(dims), v);
}

// Element-wise |got - want| <= tol · (1 + |want|) with equal dims and dtype; names the first difference.
// An NCHW fp32 tensor stored NC1HWC0 with C0 = 16: [N, ⌈C/16⌉, H, W, 16], spare lanes zero.
Tensor toNc1hwc0(const Tensor& t) {
  const Dims& d = t.dims();
  const int64_t c1 = (d[1] + 15) / 16, hw = d[2] * d[3];
  std::vector<float> in = values<float>(t), out(static_cast<size_t>(d[0] * c1 * hw * 16), 0.0f);
  for (int64_t n = 0; n < d[0]; ++n)
    for (int64_t c = 0; c < d[1]; ++c)
      for (int64_t i = 0; i < hw; ++i)
        out[size_t(((n * c1 + c / 16) * hw + i) * 16 + c % 16)] = in[size_t((n * d[1] + c) * hw + i)];
  return f32({d[0], c1, d[2], d[3], 16}, out);
}

bool near(const Tensor& got, const Tensor& want, double tol = 1e-5) {
  if (got.dtype() != want.dtype() || got.dims() != want.dims()) {
    qWarning("dtype or shape differ");
    return false;
  }
  const auto g = got.toDouble(), w = want.toDouble();
  for (size_t k = 0; k < w.size(); ++k)
    if (!(std::fabs(g[k] - w[k]) <= tol * (1 + std::fabs(w[k])))) {
      qWarning("element %zu: got %.9g, expected %.9g", k, g[k], w[k]);
      return false;
    }
  return true;
}

bool throws(const Op& op, const std::vector<Tensor>& in) {
  try {
    op.run(in);
  } catch (const std::runtime_error&) {
    return true;
  }
  return false;
}

}  // namespace

class KernelNnTest : public QObject {
  Q_OBJECT

 private slots:
  void convPaddingStrideDilation() {
    const Tensor w = f32({1, 1, 2, 2}, {1, 1, 1, 1});
    QVERIFY(near(Op("Conv").one({iota({1, 1, 3, 3}), w}), f32({1, 1, 2, 2}, {8, 12, 20, 24})));
    QVERIFY(near(Op("Conv").ints("pads", {1, 1, 1, 1}).ints("strides", {2, 2}).one({iota({1, 1, 3, 3}), w}),
                 f32({1, 1, 2, 2}, {0, 3, 9, 24})));
    QVERIFY(
        near(Op("Conv").ints("dilations", {2, 2}).one({iota({1, 1, 4, 4}), w}), f32({1, 1, 2, 2}, {20, 24, 36, 40})));
    // A 3-D kernel over a 3-D volume.
    QVERIFY(near(Op("Conv").one(
                     {f32({1, 1, 2, 2, 2}, std::vector<float>(8, 1)), f32({1, 1, 2, 2, 2}, std::vector<float>(8, 1))}),
                 f32({1, 1, 1, 1, 1}, {8})));
  }

  void convGroupBiasAutoPad() {
    // Two groups of one channel: each output channel sees only its own input channel.
    QVERIFY(
        near(Op("Conv").i("group", 2).one({f32({1, 2, 1, 1}, {1, 2}), f32({2, 1, 1, 1}, {3, 4}), f32({2}, {10, 20})}),
             f32({1, 2, 1, 1}, {13, 28})));
    const Tensor x = f32({1, 1, 4}, {1, 2, 3, 4}), w = f32({1, 1, 2}, {1, 1});
    QVERIFY(near(Op("Conv").s("auto_pad", "SAME_UPPER").one({x, w}), f32({1, 1, 4}, {3, 5, 7, 4})));
    QVERIFY(near(Op("Conv").s("auto_pad", "SAME_LOWER").one({x, w}), f32({1, 1, 4}, {1, 3, 5, 7})));
    QVERIFY(near(Op("Conv").s("auto_pad", "VALID").ints("pads", {5, 5}).one({x, w}), f32({1, 1, 3}, {3, 5, 7})));
  }

  void depthwiseConvolutionMatchesTheDirectSum() {
    // The depthwise path (zero-padded plane; 3/5/7-wide kernels at column stride 1 or 2 unrolled, the rest general;
    // padding out of proportion computed tap by tap) against the convolution's definition summed in double.
    std::mt19937 rng(11);
    struct Case {
      int64_t k, stride, dilation, multiplier;
      std::vector<int64_t> pads;
    };
    const std::vector<Case> cases = {{3, 1, 1, 1, {1, 1, 1, 1}}, {3, 2, 1, 1, {0, 1, 1, 0}}, {5, 1, 1, 2, {2, 2, 2, 2}},
                                     {5, 2, 1, 1, {2, 2, 2, 2}}, {7, 1, 1, 1, {3, 3, 3, 3}}, {7, 2, 1, 1, {0, 0, 0, 0}},
                                     {4, 1, 1, 1, {1, 2, 2, 1}}, {3, 3, 1, 1, {1, 1, 1, 1}}, {3, 1, 2, 1, {2, 2, 2, 2}},
                                     {3, 1, 1, 1, {80, 1, 80, 1}}};
    // Rows of 13 and of 71 columns: at stride 2 a row is split into even and odd columns in one masked step or in
    // several (conv_depthwise.cpp), and a row of outputs is one vector or several.
    const int64_t C = 3;
    for (const auto& [H, W] : {std::pair<int64_t, int64_t>{11, 13}, {8, 71}})
    for (const Case& c : cases) {
      const int64_t M = C * c.multiplier;
      const Tensor x = randomTensor({1, C, H, W}, rng), w = randomTensor({M, 1, c.k, c.k}, rng),
                   b = randomTensor({M}, rng);
      const Tensor y = Op("Conv").i("group", C).ints("strides", {c.stride, c.stride})
                           .ints("dilations", {c.dilation, c.dilation}).ints("pads", c.pads).one({x, w, b});
      const int64_t eff = (c.k - 1) * c.dilation + 1;
      const int64_t OH = (H + c.pads[0] + c.pads[2] - eff) / c.stride + 1;
      const int64_t OW = (W + c.pads[1] + c.pads[3] - eff) / c.stride + 1;
      const auto xv = x.toDouble(), wv = w.toDouble(), bv = b.toDouble();
      std::vector<float> want;
      for (int64_t m = 0; m < M; ++m)
        for (int64_t oh = 0; oh < OH; ++oh)
          for (int64_t ow = 0; ow < OW; ++ow) {
            double acc = bv[size_t(m)];
            for (int64_t kh = 0; kh < c.k; ++kh)
              for (int64_t kw = 0; kw < c.k; ++kw) {
                const int64_t ih = oh * c.stride - c.pads[0] + kh * c.dilation;
                const int64_t iw = ow * c.stride - c.pads[1] + kw * c.dilation;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                acc += wv[size_t((m * c.k + kh) * c.k + kw)] * xv[size_t(((m / c.multiplier) * H + ih) * W + iw)];
              }
            want.push_back(static_cast<float>(acc));
          }
      if (!near(y, f32({1, M, OH, OW}, want)))
        QFAIL(qPrintable(QString("%9 x %10: kernel %1 stride %2 dilation %3 multiplier %4 pads %5,%6,%7,%8")
                             .arg(c.k).arg(c.stride).arg(c.dilation).arg(c.multiplier)
                             .arg(c.pads[0]).arg(c.pads[1]).arg(c.pads[2]).arg(c.pads[3]).arg(H).arg(W)));
    }
  }

  void convolutionOnNc1hwc0BlocksMatchesNchw() {
    // The compiled mode's convolutions on blocked activations (kernels/conv_blocked.h) against Conv / FusedConv on
    // the NCHW tensors, stored blocked: dense (im2col from blocks, 1×1, strided, dilated, channel counts that leave
    // spare lanes) and depthwise, with a Z residual and an activation whose value at 0 is not 0 (spare lanes stay 0).
    // Products large enough for the tiled GEMM take their slivers straight from the blocks (300 channels: depth
    // blocks of 256 and a last block of 12 lanes; 40 channels × 9 taps and 33 × 25: a depth block that starts inside
    // a block of channels).
    std::mt19937 rng(5);
    struct Case {
      int64_t c, m, group, k, stride, dilation, pad;
    };
    const std::vector<Case> cases = {{20, 24, 1, 3, 1, 1, 1}, {16, 16, 1, 1, 1, 1, 0}, {5, 40, 1, 3, 2, 1, 1},
                                     {20, 20, 1, 3, 1, 2, 2}, {20, 20, 20, 3, 1, 1, 1}, {32, 32, 32, 5, 2, 1, 2},
                                     {7, 9, 1, 1, 2, 1, 0}, {20, 24, 1, 1, 1, 1, 0}, {300, 40, 1, 1, 1, 1, 0},
                                     {40, 24, 1, 3, 1, 1, 1}, {40, 20, 1, 3, 2, 2, 2}, {33, 17, 1, 5, 1, 1, 2},
                                     {20, 120, 1, 3, 1, 1, 1}, {300, 130, 1, 1, 1, 1, 0}, {40, 100, 1, 3, 1, 1, 1}};
    for (const bool fused : {false, true})
      for (const Case& c : cases) {
        const Tensor x = randomTensor({2, c.c, 9, 11}, rng), w = randomTensor({c.m, c.c / c.group, c.k, c.k}, rng);
        const Tensor b = randomTensor({c.m}, rng);
        Op op(fused ? "FusedConv" : "Conv", 1, fused ? "kiln" : "");
        op.i("group", c.group).ints("strides", {c.stride, c.stride}).ints("dilations", {c.dilation, c.dilation})
            .ints("pads", {c.pad, c.pad, c.pad, c.pad});
        if (fused) op.s("activation", "HardSigmoid").floats("activation_params", {0.2f, 0.5f});
        const Tensor plain = Op("Conv").i("group", c.group).ints("strides", {c.stride, c.stride})
                                 .ints("dilations", {c.dilation, c.dilation}).ints("pads", {c.pad, c.pad, c.pad, c.pad})
                                 .one({x, w, b});
        const Tensor z = randomTensor(plain.dims(), rng);
        const Tensor want = toNc1hwc0(fused ? op.one({x, w, b, z}) : plain);
        const Tensor xb = toNc1hwc0(x), zb = toNc1hwc0(z);
        std::vector<const Tensor*> in{&xb, &w, &b};
        if (fused) in.push_back(&zb);
        const std::optional<Tensor> got = kernels::convolveStoredNc1hwc0(**op.graph().nodes().begin(), in, x.dims(), {});
        const QString what = QString("%1 C %2 M %3 group %4 kernel %5 stride %6 dilation %7")
                                 .arg(fused ? "FusedConv" : "Conv").arg(c.c).arg(c.m).arg(c.group).arg(c.k)
                                 .arg(c.stride).arg(c.dilation);
        if (!got) QFAIL(qPrintable(what + ": declined"));
        // The same sums in the same order as the NCHW kernels: the same bits.
        if (std::memcmp(got->data(), want.data(), want.byteSize()) != 0) QFAIL(qPrintable(what));
        // Group 1 over a plane of more positions than output channels is computed directly on the blocks
        // (conv_nc1hwc0_direct.cpp) when its product is the tiled GEMM's; else through the GEMM (the last three cases,
        // and products too small for the tiled kernel), which uses the workspace.
        kernels::nn::ConvShape shape;
        shape.group = c.group;
        shape.inChannels = c.c;
        shape.outChannels = c.m;
        shape.window.kernel = {c.k, c.k};
        shape.window.in = {9, 11};
        shape.window.stride = {c.stride, c.stride};
        shape.window.out = {plain.dims()[2], plain.dims()[3]};
        const bool direct = kernels::tiledSgemmAvailable() && kernels::nn::planeWorthDirect(shape);
        if (c.group == 1 && !direct) {  // with the workspace the compiled mode allocates ahead: used, and the same bits
          std::vector<float> workspace(size_t(kernels::nn::blockedConvWorkspace(c.c, c.k * c.k, c.m, plain.dims()[2], plain.dims()[3])),
                                       std::numeric_limits<float>::quiet_NaN());
          QVERIFY(!workspace.empty());
          const std::optional<Tensor> again =
              kernels::convolveStoredNc1hwc0(**op.graph().nodes().begin(), in, x.dims(), {}, {}, workspace);
          QVERIFY(again && std::memcmp(again->data(), want.data(), want.byteSize()) == 0);
          QVERIFY2(std::any_of(workspace.begin(), workspace.end(), [](float v) { return !std::isnan(v); }),
                   qPrintable(what + ": the workspace was not used"));
        }
        const std::vector<float> g = values<float>(*got);
        for (size_t i = 0; i < g.size(); ++i)
          if (int64_t((i / 16) / size_t(got->dims()[2] * got->dims()[3]) % size_t(got->dims()[1])) == got->dims()[1] - 1 &&
              int64_t(i % 16) >= c.m % 16 && c.m % 16 != 0 && g[i] != 0.0f)
            QFAIL(qPrintable(what + ": a spare lane is not zero"));
      }
    // Grouped but not depthwise: no blocked form (the caller converts to NCHW instead).
    Op grouped("Conv");
    grouped.i("group", 2);
    const Tensor x = toNc1hwc0(randomTensor({1, 8, 5, 5}, rng)), w = randomTensor({8, 4, 3, 3}, rng);
    QVERIFY(!kernels::convolveStoredNc1hwc0(**grouped.graph().nodes().begin(), {&x, &w}, {1, 8, 5, 5}, {}));
  }

  void perChannelOpsOnNc1hwc0BlocksMatchNchw() {
    // BatchNormalization and per-channel Mul / Add on blocked activations (kernels/conv_followers.h) against their
    // kernels on NCHW: the same bits, spare lanes zero even where the op maps 0 elsewhere.
    std::mt19937 rng(9);
    const Tensor x = randomTensor({2, 20, 5, 7}, rng), xb = toNc1hwc0(x);
    Tensor var = randomTensor({20}, rng);
    std::vector<float> v = values<float>(var);
    for (float& e : v) e = std::fabs(e) + 0.5f;
    var = f32({20}, v);
    const Tensor scale = randomTensor({20}, rng), bias = randomTensor({20}, rng), mean = randomTensor({20}, rng);
    const Tensor k = randomTensor({1, 20, 1, 1}, rng), shift = randomTensor({20, 1, 1}, rng), one = f32({1}, {0.75f});
    struct Case {
      const char* op;
      std::vector<Tensor> in;
      size_t slot;
    };
    const std::vector<Case> cases = {{"BatchNormalization", {x, scale, bias, mean, var}, 0},
                                     {"Mul", {k, x}, 1}, {"Add", {x, shift}, 0}, {"Add", {one, x}, 1}};
    for (const Case& c : cases) {
      Op op(c.op);
      const Tensor want = toNc1hwc0(op.one(c.in));
      kernels::ConvFollower f{*op.graph().nodes().begin(), {}, c.slot};
      for (size_t i = 0; i < c.in.size(); ++i) f.inputs.push_back(i == c.slot ? nullptr : &c.in[i]);
      const std::optional<Tensor> got = kernels::followersOnNc1hwc0({f}, xb, x.dims(), {});
      QVERIFY2(got && got->valid(), c.op);
      QVERIFY2(std::memcmp(got->data(), want.data(), want.byteSize()) == 0, c.op);
    }
    // A whole-tensor operand is not per-channel: declined.
    Op add("Add");
    const Tensor full = randomTensor({2, 20, 5, 7}, rng);
    QVERIFY(!kernels::followersOnNc1hwc0({{*add.graph().nodes().begin(), {nullptr, &full}, 0}}, xb, x.dims(), {}));
  }

  void globalPoolsOnNc1hwc0BlocksMatchNchw() {
    // GlobalAveragePool / GlobalMaxPool on blocked activations (kernels/pool_blocked.h) against their kernels on
    // NCHW: the same bits, spare lanes zero; another pool is declined.
    std::mt19937 rng(13);
    const Tensor x = randomTensor({2, 20, 5, 7}, rng), xb = toNc1hwc0(x);
    for (const char* type : {"GlobalAveragePool", "GlobalMaxPool"}) {
      Op op(type);
      const Tensor want = toNc1hwc0(op.one({x}));
      const std::optional<Tensor> got = kernels::globalPoolNc1hwc0(**op.graph().nodes().begin(), xb, x.dims(), {});
      QVERIFY2(got && got->valid(), type);
      QCOMPARE(got->dims(), want.dims());
      QVERIFY2(std::memcmp(got->data(), want.data(), want.byteSize()) == 0, type);
    }
    Op lp("GlobalLpPool");
    QVERIFY(!kernels::globalPoolNc1hwc0(**lp.graph().nodes().begin(), xb, x.dims(), {}));
  }

  void expFloatsIsWithinAnUlpOfLibm() {
    // Softmax's exponentials (kernels/vector_math): every 257th float pattern in e^x's float range and beyond,
    // the overflow and underflow edges, infinities and NaN.
    std::vector<float> xs = {0.0f, -0.0f, 88.7228317f, 88.7228394f, -87.3365479f, -103.972076f, -103.972092f,
                             std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                             std::numeric_limits<float>::quiet_NaN()};
    for (uint64_t bits = 0; bits < (uint64_t{1} << 32); bits += 257) {
      float f;
      const auto b32 = static_cast<uint32_t>(bits);
      std::memcpy(&f, &b32, sizeof f);
      if (std::fabs(f) < 200.0f) xs.push_back(f);
    }
    std::vector<float> got(xs.size());
    kernels::expFloats(xs.data(), got.data(), xs.size());
    for (size_t i = 0; i < xs.size(); ++i) {
      const float want = std::exp(xs[i]);
      if (std::isnan(want) && std::isnan(got[i])) continue;
      int32_t a, b;
      std::memcpy(&a, &want, sizeof a);
      std::memcpy(&b, &got[i], sizeof b);
      if (std::abs(int64_t{a} - b) > 1) QFAIL(qPrintable(QString("e^%1: got %2, libm %3").arg(double(xs[i]), 0, 'g', 9)
                                                                .arg(double(got[i]), 0, 'g', 9).arg(double(want), 0, 'g', 9)));
    }
  }

  void identicalFiltersGiveIdenticalChannels() {
    // Equal filters must tie exactly, whatever row of the GEMM a channel lands in: a classifier whose logits tie
    // (SqueezeNet exported with constant weights) is judged on its softmax being uniform.
    std::mt19937 rng(7);
    const Tensor x = randomTensor({1, 96, 13, 13}, rng);
    const std::vector<float> wv(size_t(1000) * 96, 0.02f);
    const std::vector<float> b(1000, 0.5f);
    for (const Tensor& y : {Op("Conv").one({x, f32({1000, 96, 1, 1}, wv), f32({1000}, b)}),
                            Op("Conv").ints("pads", {1, 1, 1, 1}).one({x, f32({1000, 96, 3, 3}, std::vector<float>(
                                                                                   size_t(1000) * 96 * 9, 0.02f))})}) {
      const auto v = y.toDouble();
      const size_t plane = v.size() / 1000;
      for (size_t c = 1; c < 1000; ++c)
        for (size_t i = 0; i < plane; ++i)
          if (v[c * plane + i] != v[i]) QFAIL(qPrintable(QString("channel %1 differs at %2").arg(c).arg(i)));
    }
  }

  void largeConvolutionsRunInBands() {
    // 400 im2col rows × 156² positions in float (39 MB) exceed one 32 MB column band: the bands must stitch into the
    // same result as a direct convolution (summed in double here; the kernel's fp32 sums of 400 products agree to
    // a few units of 1e-6).
    std::mt19937 rng(3);
    const int64_t C = 16, M = 3, H = 160, K = 5, OH = H - K + 1;
    const Tensor x = randomTensor({1, C, H, H}, rng), w = randomTensor({M, C, K, K}, rng);
    const auto xv = x.toDouble(), wv = w.toDouble();
    std::vector<float> want(size_t(M * OH * OH));
    for (int64_t m = 0; m < M; ++m)
      for (int64_t i = 0; i < OH; ++i)
        for (int64_t j = 0; j < OH; ++j) {
          double acc = 0;
          for (int64_t c = 0; c < C; ++c)
            for (int64_t a = 0; a < K; ++a)
              for (int64_t b = 0; b < K; ++b)
                acc += xv[size_t((c * H + i + a) * H + j + b)] * wv[size_t(((m * C + c) * K + a) * K + b)];
          want[size_t((m * OH + i) * OH + j)] = float(acc);
        }
    QVERIFY(near(Op("Conv").one({x, w}), f32({1, M, OH, OH}, want), 2e-5));
  }

  void convTranspose() {
    const Tensor x = f32({1, 1, 2}, {1, 2}), w = f32({1, 1, 3}, {1, 1, 1});
    QVERIFY(near(Op("ConvTranspose").ints("strides", {2}).one({x, w}), f32({1, 1, 5}, {1, 1, 3, 2, 2})));
    QVERIFY(near(Op("ConvTranspose").ints("strides", {2}).ints("pads", {1, 1}).one({x, w}), f32({1, 1, 3}, {1, 3, 2})));
    QVERIFY(near(Op("ConvTranspose").ints("strides", {2}).ints("output_padding", {1}).one({x, w}),
                 f32({1, 1, 6}, {1, 1, 3, 2, 2, 0})));
    // output_shape one longer than the natural extent: the extra element goes at the end.
    QVERIFY(near(Op("ConvTranspose").ints("strides", {2}).ints("output_shape", {6}).one({x, w}),
                 f32({1, 1, 6}, {1, 1, 3, 2, 2, 0})));
    // Group 2: W [C=2, M/group=1, k] and a bias per output channel.
    QVERIFY(near(
        Op("ConvTranspose").i("group", 2).one({f32({1, 2, 1}, {1, 2}), f32({2, 1, 2}, {1, 2, 3, 4}), f32({2}, {0, 1})}),
        f32({1, 2, 2}, {1, 2, 7, 9})));
  }

  void matMulForms() {
    const Tensor b23 = f32({2, 3}, {1, 2, 3, 4, 5, 6});
    QVERIFY(near(Op("MatMul").one({f32({2}, {1, 2}), b23}), f32({3}, {9, 12, 15})));  // 1-D A: row, then dropped
    QVERIFY(near(Op("MatMul").one({f32({2, 2}, {1, 2, 3, 4}), f32({2}, {1, 1})}), f32({2}, {3, 7})));
    QVERIFY(near(Op("MatMul").one({f32({2, 1, 2}, {1, 2, 3, 4}), f32({2, 1}, {1, 1})}), f32({2, 1, 1}, {3, 7})));
    // Batch dims broadcast: [2,1,1,2] x [3,2,1] -> [2,3,1,1].
    const Tensor y = Op("MatMul").one({f32({2, 1, 1, 2}, {1, 0, 0, 1}), f32({3, 2, 1}, {1, 2, 3, 4, 5, 6})});
    QVERIFY(near(y, f32({2, 3, 1, 1}, {1, 3, 5, 2, 4, 6})));
    // Empty operands: an empty batch gives an empty product; an empty inner dimension sums nothing.
    QCOMPARE(Op("MatMul").one({f32({3, 0, 2}, {}), f32({2, 4}, std::vector<float>(8, 1))}).dims(), (Dims{3, 0, 4}));
    QVERIFY(near(Op("MatMul").one({f32({2, 0}, {}), f32({0, 3}, {})}), f32({2, 3}, std::vector<float>(6, 0))));
    const Tensor yi = Op("MatMul").one({i32({2, 2}, {1, 2, 3, 4}), i32({2, 2}, {5, 6, 7, 8})});
    QCOMPARE(yi.toInt64(), (std::vector<int64_t>{19, 22, 43, 50}));
    QVERIFY(throws(Op("MatMul"), {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({2, 3}, {1, 2, 3, 4, 5, 6})}));
  }

  void tiledProductIsOneFmaChainPerOutput() {
    // Kiln's own GEMM (kernels/sgemm_tiles.h) against its definition: each output one fused multiply-add chain over
    // p in order from zero, bit for bit, whatever the tiling: row tails (4, 8 and 12-row tiles), column tails
    // (16 and 32-wide panels), few panels (row tiles outside) and many (panels outside), depths across the 256-deep
    // blocks, and leading dimensions wider than the extents.
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (const int64_t m : {1, 5, 12, 13, 25})
      for (const int64_t n : {1, 17, 33, 160})
        for (const int64_t k : {1, 255, 257, 600}) {
          const int64_t lda = k + 3, ldb = n + 5, ldc = n + 2;
          std::vector<float> a(static_cast<size_t>(m * lda)), b(static_cast<size_t>(k * ldb));
          for (float& v : a) v = u(rng);
          for (float& v : b) v = u(rng);
          std::vector<float> c(static_cast<size_t>(m * ldc), 42.0f);
          kernels::tiledSgemm(m, n, k, a.data(), lda, b.data(), ldb, c.data(), ldc);
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < ldc; ++j) {
              float want = 42.0f;  // beyond n: untouched
              if (j < n) {
                want = 0.0f;
                for (int64_t p = 0; p < k; ++p) want = std::fma(a[size_t(i * lda + p)], b[size_t(p * ldb + j)], want);
              }
              const float got = c[size_t(i * ldc + j)];
              if (std::memcmp(&got, &want, sizeof got) != 0)
                QFAIL(qPrintable(QString("m %1 n %2 k %3: C[%4][%5] = %6, the chain gives %7")
                                     .arg(m).arg(n).arg(k).arg(i).arg(j).arg(double(got), 0, 'g', 9)
                                     .arg(double(want), 0, 'g', 9)));
            }
        }
  }

  void classifierGemmIsDotProductsOfRows() {
    // Gemm with transB over a few rows (a classifier over one image: kernels/matmul.cpp, dotRowsGemm) against the
    // definition in double: every output alpha·(row of A · row of B) + beta·C, C broadcast; k not a multiple of the
    // 16 lanes, n split between threads.
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (const int64_t m : {1, 3})
      for (const int64_t k : {1000, 1283}) {
        const int64_t n = 257;
        std::vector<float> av(static_cast<size_t>(m * k)), bv(static_cast<size_t>(n * k)), cv(static_cast<size_t>(n));
        for (float& v : av) v = u(rng);
        for (float& v : bv) v = u(rng);
        for (float& v : cv) v = u(rng);
        const Tensor y = Op("Gemm").i("transB", 1).f("alpha", 0.5f).f("beta", 2.0f)
                             .one({f32({m, k}, av), f32({n, k}, bv), f32({n}, cv)});
        QCOMPARE(y.dims(), (Dims{m, n}));
        const float* got = reinterpret_cast<const float*>(y.data());
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            double dot = 0, scale = 0;
            for (int64_t p = 0; p < k; ++p) {
              dot += double(av[size_t(i * k + p)]) * bv[size_t(j * k + p)];
              scale += std::fabs(double(av[size_t(i * k + p)]) * bv[size_t(j * k + p)]);
            }
            const double want = 0.5 * dot + 2.0 * cv[size_t(j)];
            // float sums in 16 lanes of k / 16 products each: well within 16 ulps of the sum of the magnitudes
            if (std::fabs(got[i * n + j] - want) > 1e-6 * (scale + 2.0 * std::fabs(cv[size_t(j)])))
              QFAIL(qPrintable(QString("m %1 k %2: Y[%3][%4] = %5, want %6").arg(m).arg(k).arg(i).arg(j)
                                   .arg(double(got[i * n + j]), 0, 'g', 9).arg(want, 0, 'g', 9)));
          }
      }
  }

  void largeConvolutionsGatherTheirColumns() {
    // A convolution whose im2col matrix would pass 1 MiB gathers its columns straight into the GEMM's slivers
    // (conv.cpp, ColumnGather): each output must still be the chain over (channel, kh, kw) in order of the values
    // im2col holds (zero in the padding), bit for bit, at strides 1 and 2, dilation, padding on any side, output
    // lines shorter and longer than a 32-column sliver. The compiled mode's blocked kernel (im2col from blocks)
    // gives the same bits.
    if (!kernels::tiledSgemmAvailable()) QSKIP("this build multiplies through OpenBLAS (no AVX-512 kernel)");
    std::mt19937 rng(9);
    struct Case {
      int64_t c, m, h, w, k, stride, dilation;
      std::vector<int64_t> pads;
    };
    // The first three (planes of more positions than output channels, gathers larger than the input and output)
    // the NCHW kernel computes on NC1HWC0 blocks (conv.cpp, convolveThroughBlocks); the others gather their columns
    // (the last two have more output channels than positions).
    const std::vector<Case> cases = {{24, 16, 60, 70, 3, 1, 1, {1, 1, 1, 1}}, {8, 12, 90, 96, 7, 2, 1, {3, 3, 3, 3}},
                                     {48, 8, 40, 20, 3, 1, 2, {2, 0, 1, 3}}, {32, 20, 64, 64, 3, 2, 1, {0, 0, 1, 1}},
                                     {128, 300, 16, 16, 3, 1, 1, {1, 1, 1, 1}}, {128, 260, 31, 32, 3, 2, 1, {1, 1, 1, 0}}};
    for (const Case& c : cases) {
      const Tensor x = randomTensor({1, c.c, c.h, c.w}, rng), w = randomTensor({c.m, c.c, c.k, c.k}, rng);
      const Tensor y = Op("Conv").ints("strides", {c.stride, c.stride}).ints("dilations", {c.dilation, c.dilation})
                           .ints("pads", c.pads).one({x, w});
      const int64_t oh = y.dims()[2], ow = y.dims()[3];
      QVERIFY(c.c * c.k * c.k * oh * ow * 4 > (int64_t{1} << 20));
      const float* xv = reinterpret_cast<const float*>(x.data());
      const float* wv = reinterpret_cast<const float*>(w.data());
      const float* yv = reinterpret_cast<const float*>(y.data());
      for (int64_t m = 0; m < c.m; ++m)
        for (int64_t i = 0; i < oh; ++i)
          for (int64_t j = 0; j < ow; ++j) {
            float acc = 0.0f;
            for (int64_t ch = 0; ch < c.c; ++ch)
              for (int64_t kh = 0; kh < c.k; ++kh)
                for (int64_t kw = 0; kw < c.k; ++kw) {
                  const int64_t ih = i * c.stride - c.pads[0] + kh * c.dilation, iw = j * c.stride - c.pads[1] + kw * c.dilation;
                  const float v = ih >= 0 && ih < c.h && iw >= 0 && iw < c.w ? xv[(ch * c.h + ih) * c.w + iw] : 0.0f;
                  acc = std::fma(wv[((m * c.c + ch) * c.k + kh) * c.k + kw], v, acc);
                }
            const float got = yv[(m * oh + i) * ow + j];
            if (std::memcmp(&got, &acc, sizeof got) != 0)
              QFAIL(qPrintable(QString("%1x%2 kernel %3 stride %4: y[%5][%6][%7] = %8, the chain gives %9")
                                   .arg(c.h).arg(c.w).arg(c.k).arg(c.stride).arg(m).arg(i).arg(j)
                                   .arg(double(got), 0, 'g', 9).arg(double(acc), 0, 'g', 9)));
          }
      const Tensor xb = toNc1hwc0(x);
      Op conv("Conv");
      conv.ints("strides", {c.stride, c.stride}).ints("dilations", {c.dilation, c.dilation}).ints("pads", c.pads);
      const std::optional<Tensor> blocked = kernels::convolveStoredNc1hwc0(**conv.graph().nodes().begin(), {&xb, &w}, x.dims(), {});
      QVERIFY(blocked && std::memcmp(blocked->data(), toNc1hwc0(y).data(), blocked->byteSize()) == 0);
    }
  }

  void convolutionsFinishedBandByBandKeepTheirBits() {
    // With a bias (or channel steps) a tiled convolution is multiplied and finished a band of columns at a time
    // (conv.cpp), and the blocked kernel stores its product into the blocks band by band (conv_nc1hwc0.cpp): many
    // output channels over many positions make several bands and a partial last one. Each output must still be
    // the whole chain plus its bias: the bits of the product without a bias (one band) with the bias added after.
    if (!kernels::tiledSgemmAvailable()) QSKIP("this build multiplies through OpenBLAS (no AVX-512 kernel)");
    std::mt19937 rng(21);
    struct Case {
      int64_t c, m, h, w, k;
    };
    // (The first two directly on the blocks; the third, more channels than positions, through the GEMM in bands.)
    for (const Case& c : std::vector<Case>{{20, 600, 40, 37, 1}, {40, 300, 30, 31, 3}, {8, 1200, 25, 40, 1}}) {
      const Tensor x = randomTensor({1, c.c, c.h, c.w}, rng), w = randomTensor({c.m, c.c, c.k, c.k}, rng);
      const Tensor b = randomTensor({c.m}, rng);
      const std::vector<int64_t> pads(4, c.k / 2);
      const Tensor product = Op("Conv").ints("pads", pads).one({x, w});
      const Tensor y = Op("Conv").ints("pads", pads).one({x, w, b});
      const Tensor want = Op("Add").one({product, kernels::viewAs(b, {c.m, 1, 1})});
      const QString what = QString("C %1 M %2 %3x%4 kernel %5").arg(c.c).arg(c.m).arg(c.h).arg(c.w).arg(c.k);
      QVERIFY2(std::memcmp(y.data(), want.data(), want.byteSize()) == 0, qPrintable(what));
      const Tensor xb = toNc1hwc0(x);
      Op conv("Conv");
      conv.ints("pads", pads);
      const std::optional<Tensor> blocked =
          kernels::convolveStoredNc1hwc0(**conv.graph().nodes().begin(), {&xb, &w, &b}, x.dims(), {});
      QVERIFY2(blocked && std::memcmp(blocked->data(), toNc1hwc0(want).data(), blocked->byteSize()) == 0,
               qPrintable(what + " (blocked)"));
    }
  }

  void gemmTransposes() {
    const Tensor a = f32({3, 2}, {1, 2, 3, 4, 5, 6}), b = f32({2, 3}, {1, 0, 1, 0, 1, 0});
    Op gemm("Gemm");
    gemm.i("transA", 1).i("transB", 1).f("alpha", 2.0f).f("beta", 0.5f);
    QVERIFY(near(gemm.one({a, b, f32({2}, {1, 2})}), f32({2, 2}, {12.5f, 7, 16.5f, 9})));
    QVERIFY(near(gemm.one({a, b}), f32({2, 2}, {12, 6, 16, 8})));  // no C
    QVERIFY(throws(Op("Gemm").i("transA", 1), {a, b}));            // Aᵀ [2,3] x B [2,3]: inner dims differ
  }

  void stride1PoolsMatchTheirDefinition() {
    // 3×3 MaxPool and AveragePool at stride 1 (Inception's branch pools) against the definition, bit for bit:
    // the maximum of the inside taps; the taps summed in double row by row, column by column, divided by the taps
    // counted (padding included or not). Plane widths from 1 up, so that rows of every length meet.
    std::mt19937 rng(5);
    for (const int64_t h : {1, 3, 7, 14})
      for (const int64_t wd : {1, 2, 7, 14, 17}) {
        const Tensor x = randomTensor({1, 3, h, wd}, rng);
        const float* xv = reinterpret_cast<const float*>(x.data());
        const Tensor mx = Op("MaxPool").ints("kernel_shape", {3, 3}).ints("pads", {1, 1, 1, 1}).one({x});
        for (const int64_t includePad : {0, 1}) {
          const Tensor av = Op("AveragePool").ints("kernel_shape", {3, 3}).ints("pads", {1, 1, 1, 1})
                                .i("count_include_pad", includePad).one({x});
          QCOMPARE(av.dims(), (Dims{1, 3, h, wd}));
          for (int64_t c = 0; c < 3; ++c)
            for (int64_t oh = 0; oh < h; ++oh)
              for (int64_t ow = 0; ow < wd; ++ow) {
                double sum = 0;
                float most = -std::numeric_limits<float>::infinity();
                int64_t inside = 0;
                for (int64_t ih = oh - 1; ih <= oh + 1; ++ih)
                  for (int64_t iw = ow - 1; iw <= ow + 1; ++iw) {
                    const bool in = ih >= 0 && ih < h && iw >= 0 && iw < wd;
                    const float v = in ? xv[(c * h + ih) * wd + iw] : 0.0f;
                    sum += static_cast<double>(v);
                    if (in) most = std::max(most, v), ++inside;
                  }
                const float wantAv = static_cast<float>(sum / static_cast<double>(includePad ? 9 : inside));
                const size_t at = static_cast<size_t>((c * h + oh) * wd + ow);
                const float gotAv = reinterpret_cast<const float*>(av.data())[at];
                const float gotMax = reinterpret_cast<const float*>(mx.data())[at];
                QVERIFY2(std::memcmp(&gotAv, &wantAv, sizeof gotAv) == 0,
                         qPrintable(QString("AveragePool %1x%2 at (%3, %4, %5)").arg(h).arg(wd).arg(c).arg(oh).arg(ow)));
                QVERIFY2(gotMax == most,
                         qPrintable(QString("MaxPool %1x%2 at (%3, %4, %5)").arg(h).arg(wd).arg(c).arg(oh).arg(ow)));
              }
        }
      }
  }

  void pools() {
    const Tensor x = iota({1, 1, 3, 3});
    auto out = Op("MaxPool", 2).ints("kernel_shape", {2, 2}).run({x});
    QVERIFY(near(out.at(0), f32({1, 1, 2, 2}, {4, 5, 7, 8})));
    QCOMPARE(out.at(1).toInt64(), (std::vector<int64_t>{4, 5, 7, 8}));
    out = Op("MaxPool", 2).ints("kernel_shape", {2, 2}).i("storage_order", 1).run({x});
    QCOMPARE(out.at(1).toInt64(), (std::vector<int64_t>{4, 7, 5, 8}));  // column-major within the plane
    const Tensor x4 = f32({1, 1, 2, 2}, {1, 2, 3, 4});
    Op avg("AveragePool");
    avg.ints("kernel_shape", {2, 2}).ints("pads", {1, 1, 1, 1});
    QVERIFY(near(avg.one({x4}), f32({1, 1, 3, 3}, {1, 1.5f, 2, 2, 2.5f, 3, 3, 3.5f, 4})));
    avg.i("count_include_pad", 1);
    QVERIFY(near(avg.one({x4}), f32({1, 1, 3, 3}, {0.25f, 0.75f, 0.5f, 1, 2.5f, 1.5f, 0.75f, 1.75f, 1})));
    const Tensor x5 = f32({1, 1, 5}, {1, 2, 3, 4, 5});
    QVERIFY(
        near(Op("AveragePool").ints("kernel_shape", {2}).ints("strides", {2}).one({x5}), f32({1, 1, 2}, {1.5f, 3.5f})));
    QVERIFY(near(Op("AveragePool").ints("kernel_shape", {2}).ints("strides", {2}).i("ceil_mode", 1).one({x5}),
                 f32({1, 1, 3}, {1.5f, 3.5f, 5})));
    QVERIFY(near(Op("LpPool").ints("kernel_shape", {2}).one({f32({1, 1, 2}, {3, 4})}), f32({1, 1, 1}, {5})));
    QVERIFY(near(Op("GlobalAveragePool").one({x4}), f32({1, 1, 1, 1}, {2.5f})));
    QVERIFY(near(Op("GlobalMaxPool").one({x4}), f32({1, 1, 1, 1}, {4})));
    QVERIFY(near(Op("GlobalLpPool").one({f32({1, 1, 2}, {3, 4})}), f32({1, 1, 1}, {5})));
    // A huge window over mostly padding visits only its taps inside the input (instantly, not 2⁴⁰ taps).
    const int64_t huge = int64_t{1} << 40;
    QVERIFY(near(Op("AveragePool")
                     .ints("kernel_shape", {huge})
                     .ints("pads", {huge - 1, huge - 1})
                     .ints("strides", {huge})
                     .one({f32({1, 1, 2}, {1, 2})}),
                 f32({1, 1, 2}, {1, 2})));
    QVERIFY(throws(Op("MaxPool"), {x}));                                                 // no kernel_shape
    QVERIFY(throws(Op("MaxPool").ints("kernel_shape", {2, 2}).ints("pads", {1}), {x}));  // pads of the wrong length
  }

  void normalizations() {
    Op bn("BatchNormalization");
    bn.f("epsilon", 0.0f);
    QVERIFY(near(
        bn.one({f32({1, 2, 1, 1}, {1, 2}), f32({2}, {1, 2}), f32({2}, {0, 1}), f32({2}, {0, 1}), f32({2}, {1, 4})}),
        f32({1, 2, 1, 1}, {1, 2})));
    QVERIFY(
        near(Op("InstanceNormalization").f("epsilon", 0.0f).one({f32({1, 1, 2}, {1, 3}), f32({1}, {1}), f32({1}, {0})}),
             f32({1, 1, 2}, {-1, 1})));
    auto ln = Op("LayerNormalization", 3).run({f32({2, 2}, {1, 3, 2, 2}), f32({2}, {1, 2}), f32({2}, {0, 1})});
    const float inv0 = 1 / std::sqrt(1 + 1e-5f), inv1 = 1 / std::sqrt(1e-5f);
    QVERIFY(near(ln.at(0), f32({2, 2}, {-inv0, 2 * inv0 + 1, 0, 1})));
    QVERIFY(near(ln.at(1), f32({2, 1}, {2, 2})));
    QVERIFY(near(ln.at(2), f32({2, 1}, {inv0, inv1})));
    QVERIFY(near(Op("LRN").i("size", 2).f("alpha", 2).f("beta", 1).one({f32({1, 2, 1, 1}, {1, 2})}),
                 f32({1, 2, 1, 1}, {1.0f / 6, 0.4f})));
    QVERIFY(near(Op("MeanVarianceNormalization").one({f32({1, 1, 1, 2}, {1, 3})}), f32({1, 1, 1, 2}, {-1, 1})));
    QVERIFY(throws(Op("BatchNormalization"),
                   {f32({1, 2}, {1, 2}), f32({3}, {1, 1, 1}), f32({2}, {0, 0}), f32({2}, {0, 0}), f32({2}, {1, 1})}));
  }

  void softmaxForms() {
    const Tensor x = iota({1, 2, 2});
    const float a = 1 / (1 + std::exp(2.0f));  // softmax([0, 2])[0]
    QVERIFY(near(Op("Softmax").i("axis", 1).opset(13).one({x}), f32({1, 2, 2}, {a, a, 1 - a, 1 - a})));
    const double z = 1 + std::exp(1.0) + std::exp(2.0) + std::exp(3.0);  // opset 11: the whole [2, 2] block
    QVERIFY(near(
        Op("Softmax").i("axis", 1).opset(11).one({x}),
        f32({1, 2, 2}, {float(1 / z), float(std::exp(1.0) / z), float(std::exp(2.0) / z), float(std::exp(3.0) / z)})));
    // Without a known opset, only where both forms agree.
    QVERIFY(Op("Softmax").i("axis", 1).run({x}).empty());
    QVERIFY(Op("Softmax").run({x}).empty());
    QVERIFY(near(Op("Softmax").i("axis", -1).one({x}), Op("Softmax").i("axis", 2).opset(11).one({x})));
    QVERIFY(near(Op("LogSoftmax").one({f32({2}, {0, 0})}), f32({2}, {-std::log(2.0f), -std::log(2.0f)})));
    QVERIFY(near(Op("Hardmax").one({f32({2, 3}, {1, 3, 3, 0, -1, -2})}), f32({2, 3}, {0, 1, 0, 1, 0, 0})));
    QVERIFY(throws(Op("Softmax").i("axis", 3), {x}));
  }

  void fp16RoundsOnStore() {
    // 1 + 3·2⁻¹¹ lies exactly between two halves: round-to-nearest-even gives 1 + 2⁻⁹, truncation 1 + 2⁻¹⁰.
    const Tensor y = Op("MatMul").one({f16({1, 2}, {1, 1}), f16({2, 1}, {1, 3.0f / 2048})});
    QCOMPARE(y.dtype(), DType::Float16);
    QCOMPARE(y.toDouble().at(0), 1.0 + 1.0 / 512);
    const Tensor c = Op("Conv").one({f16({1, 2, 1, 1}, {1, 1}), f16({1, 2, 1, 1}, {1, 3.0f / 2048})});
    QCOMPARE(c.toDouble().at(0), 1.0 + 1.0 / 512);
  }

  void contract() {
    // Unsupported element types decline; malformed nodes throw; outputs above the limit are refused.
    QVERIFY(Op("Conv").run({i32({1, 1, 2, 2}, {1, 2, 3, 4}), i32({1, 1, 1, 1}, {1})}).empty());
    QVERIFY(Op("Gemm").run({i32({1, 1}, {1}), i32({1, 1}, {1})}).empty());
    QVERIFY(Op("Softmax").run({i64({2}, {1, 2})}).empty());
    QVERIFY(Op("AveragePool").ints("kernel_shape", {1}).run({i32({1, 1, 2}, {1, 2})}).empty());
    QVERIFY(throws(Op("Conv"), {iota({1, 2, 3, 3}), f32({1, 1, 1, 1}, {1})}));                // channels differ
    QVERIFY(throws(Op("Conv").i("group", 0), {iota({1, 1, 3, 3}), f32({1, 1, 1, 1}, {1})}));  // bad group
    QVERIFY(throws(Op("Conv").ints("strides", {1}), {iota({1, 1, 3, 3}), f32({1, 1, 1, 1}, {1})}));
    QVERIFY(throws(Op("Conv").ints("strides", {0, 1}), {iota({1, 1, 3, 3}), f32({1, 1, 1, 1}, {1})}));
    QVERIFY(throws(Op("Conv"), {iota({1, 1, 2, 2}), f32({1, 1, 3, 3}, std::vector<float>(9, 1))}));  // kernel too big
    QVERIFY(throws(Op("Conv").ints("pads", {0, 0, int64_t{1} << 62, 0}), {iota({1, 1, 2, 2}), f32({1, 1, 1, 1}, {1})}));
    QVERIFY(throws(Op("ConvTranspose").ints("output_shape", {1, 2}), {iota({1, 1, 2}), f32({1, 1, 1}, {1})}));
    KernelLimits small;
    small.maxOutputBytes = 1024;
    QVERIFY_THROWS_EXCEPTION(
        KernelOutputTooLarge,
        Op("ConvTranspose").ints("strides", {100000}).run({iota({1, 1, 4}), f32({1, 1, 1}, {1})}, small));
  }

  // ---- Kiln's fused ops against the unfused ONNX sequence ----

  void fusedMatMulMatchesUnfused() {
    std::mt19937 rng(7);
    const Tensor a = randomTensor({2, 3, 4}, rng), b = randomTensor({5, 4}, rng), bias = randomTensor({5}, rng);
    Op fused("FusedMatMul", 1, "kiln");
    fused.i("trans_b", 1).s("activation", "Gelu");
    const Tensor y = fused.one({a, b, bias});
    // Transpose(B) -> MatMul -> Add(bias) -> x · 0.5 · (1 + erf(x / √2)) written out.
    const Tensor bt = Op("Transpose").ints("perm", {1, 0}).one({b});
    const Tensor s = Op("Add").one({Op("MatMul").one({a, bt}), bias});
    const Tensor e = Op("Erf").one({Op("Div").one({s, f32({}, {std::sqrt(2.0f)})})});
    const Tensor g = Op("Mul").one({Op("Mul").one({s, f32({}, {0.5f})}), Op("Add").one({e, f32({}, {1})})});
    QVERIFY(near(y, g));
    // alpha scales the product before the bias; Relu.
    Op scaled("FusedMatMul", 1, "kiln");
    scaled.f("alpha", 0.5f).s("activation", "Relu");
    const Tensor a2 = randomTensor({3, 4}, rng), b2 = randomTensor({4, 5}, rng);
    const Tensor want =
        Op("Relu").one({Op("Add").one({Op("Mul").one({Op("MatMul").one({a2, b2}), f32({}, {0.5f})}), bias})});
    QVERIFY(near(scaled.one({a2, b2, bias}), want));
    QVERIFY(throws(Op("FusedMatMul", 1, "kiln").s("activation", "Swish"), {a2, b2}));
    // fp16: the product rounded to fp16 as MatMul stores it, then each biased sum rounded as Add stores it before
    // the activation reads it: the same bits as the three ops (rows of a bias along the last axis).
    const auto half = [](const Tensor& t) { return convertTensor(t, DType::Float16); };
    const Tensor a3 = half(randomTensor({4, 6, 8}, rng)), b3 = half(randomTensor({8, 5}, rng)), bias3 = half(bias);
    const Tensor got = Op("FusedMatMul", 1, "kiln").s("activation", "Tanh").one({a3, b3, bias3});
    const Tensor unfused = Op("Tanh").one({Op("Add").one({Op("MatMul").one({a3, b3}), bias3})});
    QCOMPARE(got.dims(), unfused.dims());
    QVERIFY(std::memcmp(got.data(), unfused.data(), unfused.byteSize()) == 0);
  }

  void fusedConvMatchesUnfused() {
    std::mt19937 rng(11);
    const Tensor x = randomTensor({2, 4, 5, 5}, rng), w = randomTensor({6, 2, 3, 3}, rng), b = randomTensor({6}, rng);
    const Tensor z = randomTensor({2, 6, 3, 3}, rng);
    Op conv("Conv");
    conv.i("group", 2).ints("strides", {2, 2}).ints("pads", {1, 1, 1, 1}).ints("dilations", {1, 1});
    const Tensor c = conv.one({x, w, b});
    QCOMPARE(c.dims(), (Dims{2, 6, 3, 3}));
    Op fused("FusedConv", 1, "kiln");
    fused.i("group", 2).ints("strides", {2, 2}).ints("pads", {1, 1, 1, 1}).s("activation", "Relu");
    QVERIFY(near(fused.one({x, w, b, z}), Op("Relu").one({Op("Add").one({c, z})})));
    Op silu("FusedConv", 1, "kiln");
    silu.i("group", 2).ints("strides", {2, 2}).ints("pads", {1, 1, 1, 1}).s("activation", "SiLU");
    QVERIFY(near(silu.one({x, w, b}), Op("Mul").one({c, Op("Sigmoid").one({c})})));
    Op leaky("FusedConv", 1, "kiln");
    leaky.i("group", 2).ints("strides", {2, 2}).ints("pads", {1, 1, 1, 1}).s("activation", "LeakyRelu");
    leaky.attr("activation_params", std::vector<float>{0.1f});
    std::vector<float> lv;
    for (double e : c.toDouble()) lv.push_back(static_cast<float>(e >= 0 ? e : 0.1 * e));
    QVERIFY(near(leaky.one({x, w, b}), f32(c.dims(), lv)));
    QVERIFY(throws(Op("FusedConv", 1, "kiln").s("activation", "LeakyRelu"), {x, w, b}));  // no alpha
  }

  void attentionMatchesUnfused() {
    std::mt19937 rng(3);
    const int64_t batch = 2, seq = 3, kvSeq = 4, heads = 2, d = 4;
    const Tensor q = randomTensor({batch, seq, heads * d}, rng), k = randomTensor({batch, kvSeq, heads * d}, rng);
    const Tensor v = randomTensor({batch, kvSeq, heads * d}, rng), mask = randomTensor({batch, 1, 1, kvSeq}, rng);
    const float scale = 0.5f;
    const auto split = [&](const Tensor& t, int64_t s, std::vector<int64_t> perm) {
      const Tensor r =
          Op("Reshape").one({t, Tensor::fromVector(DType::Int64, {4}, std::vector<int64_t>{batch, s, heads, d})});
      return Op("Transpose").ints("perm", std::move(perm)).one({r});
    };
    const auto unfused = [&](const std::function<Tensor(const Tensor&)>& masking) {
      const Tensor scores = Op("Mul").one(
          {Op("MatMul").one({split(q, seq, {0, 2, 1, 3}), split(k, kvSeq, {0, 2, 3, 1})}), f32({}, {scale})});
      const Tensor p = Op("Softmax").i("axis", -1).one({masking(scores)});
      const Tensor o =
          Op("Transpose").ints("perm", {0, 2, 1, 3}).one({Op("MatMul").one({p, split(v, kvSeq, {0, 2, 1, 3})})});
      return Op("Reshape").one({o, Tensor::fromVector(DType::Int64, {3}, std::vector<int64_t>{batch, seq, heads * d})});
    };
    Op fused("Attention", 1, "kiln");
    fused.i("num_heads", heads).f("scale", scale);
    QVERIFY(near(fused.one({q, k, v, mask}), unfused([&](const Tensor& s) { return Op("Add").one({s, mask}); })));
    QVERIFY(near(fused.one({q, k, v}), unfused([](const Tensor& s) { return s; })));
    // A bool mask is a masked_fill: Where(cond, fill, scores).
    const Tensor cond = boolean({batch, 1, 1, kvSeq}, {0, 0, 1, 1, 0, 1, 0, 0});
    Op filled("Attention", 1, "kiln");
    filled.i("num_heads", heads).f("scale", scale).f("mask_filter_value", -10000.0f);
    QVERIFY(near(filled.one({q, k, v, cond}), unfused([&](const Tensor& s) {
                   return Op("Where").one({cond, f32({}, {-10000.0f}), s});
                 })));
    QVERIFY(throws(Op("Attention", 1, "kiln").i("num_heads", 3), {q, k, v}));  // 8 does not split into 3 heads
    // fp16: each stored intermediate rounded to fp16 (the scores, scaled, masked; the probabilities).
    const auto half = [](const Tensor& t) { return convertTensor(t, DType::Float16); };
    const Tensor got = fused.one({half(q), half(k), half(v), half(mask)});
    QCOMPARE(got.dtype(), DType::Float16);
    QVERIFY(near(convertTensor(got, DType::Float), unfused([&](const Tensor& s) { return Op("Add").one({s, mask}); }),
                 2e-3));
  }

  void softmaxFusionsMatchUnfused() {
    std::mt19937 rng(5);
    const Tensor x = randomTensor({2, 3, 4}, rng), bias = randomTensor({1, 3, 4}, rng);
    // BiasSoftmax over the last axis is Softmax(X + Bias, -1); over the block [1, 3) it is opset 11's Softmax axis 1.
    QVERIFY(near(Op("BiasSoftmax", 1, "kiln").i("axis", 2).one({x, bias}),
                 Op("Softmax").i("axis", -1).one({Op("Add").one({x, bias})})));
    QVERIFY(near(Op("BiasSoftmax", 1, "kiln").i("axis", 1).one({x, bias}),
                 Op("Softmax").i("axis", 1).opset(11).one({Op("Add").one({x, bias})})));
    // Inference dropout is the identity with an all-true mask; a real training dropout is declined.
    const auto sd = Op("SoftmaxDropout", 2, "kiln").i("axis", 2).run({x});
    QCOMPARE(sd.size(), size_t{2});
    QVERIFY(near(sd[0], Op("Softmax").i("axis", -1).one({x})));
    QCOMPARE(sd[1].dtype(), DType::Bool);
    QCOMPARE(std::count(sd[1].data(), sd[1].data() + sd[1].numel(), uint8_t{1}), std::ptrdiff_t{24});
    QVERIFY(Op("SoftmaxDropout", 1, "kiln").i("axis", 2).run({x, f32({}, {0.5f}), boolean({}, {1})}).empty());
    QVERIFY(near(Op("SoftmaxDropout", 1, "kiln").i("axis", 2).one({x, f32({}, {0.0f}), boolean({}, {1})}),
                 Op("Softmax").i("axis", -1).one({x})));
  }
};

QTEST_GUILESS_MAIN(KernelNnTest)
#include "test_kernels_nn.moc"
