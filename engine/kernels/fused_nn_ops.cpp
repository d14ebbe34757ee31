// Kiln's fused Cube/Vector NN ops (ir/opdefs/kiln_fused_ops.cpp, kiln_attention_ops.cpp), each evaluated as the
// sequence of ONNX ops its fusion rule (fusion/rules/) replaced, with the same cores as MatMul, Conv and Softmax.
// Where the unfused sequence stored an intermediate, the value is rounded to the element type (roundAs), so fp16
// results match the unfused graph's; Transpose/Reshape steps are exact and just index arithmetic here.
//   FusedMatMul  activation(alpha · op(A) @ op(B) + Bias)
//   FusedConv    activation(Conv(X, W, B) + Z)
//   Attention    merge_heads(softmax(mask(split(Q) @ split(K)ᵀ · scale)) @ split(V))
//   SoftmaxDropout, BiasSoftmax   Dropout(Softmax(X)) (inference / ratio 0 only), Softmax(X + Bias) over the rows
//                [axis, rank)
#include <cmath>
#include <map>
#include <numbers>

#include <span>

#include "kernels/conv_blocked.h"
#include "kernels/nn_kernels.h"
#include "ir/graph.h"
#include "ir/shape.h"

namespace kiln::kernels {
namespace {

// The activations the fusion rules write into `activation` / `activation_params`.
struct Activation {
  enum Kind { None, Relu, Relu6, Clip, LeakyRelu, Sigmoid, HardSigmoid, HardSwish, Tanh, SiLU, Gelu, GeluTanh };
  Kind kind = None;
  std::vector<float> params;
};

Activation activationOf(const KernelContext& ctx) {
  static const std::map<std::string, std::pair<Activation::Kind, size_t>> kinds = {
      {"", {Activation::None, 0}},
      {"Relu", {Activation::Relu, 0}},
      {"Relu6", {Activation::Relu6, 0}},
      {"Clip", {Activation::Clip, 2}},
      {"LeakyRelu", {Activation::LeakyRelu, 1}},
      {"Sigmoid", {Activation::Sigmoid, 0}},
      {"HardSigmoid", {Activation::HardSigmoid, 2}},
      {"HardSwish", {Activation::HardSwish, 0}},
      {"Tanh", {Activation::Tanh, 0}},
      {"SiLU", {Activation::SiLU, 0}},
      {"Gelu", {Activation::Gelu, 0}},
      {"GeluTanh", {Activation::GeluTanh, 0}}};
  const std::string name = ctx.node().attrString("activation", "");
  const auto it = kinds.find(name);
  if (it == kinds.end()) ctx.fail("unknown activation '" + name + "'");
  Activation a;
  a.kind = it->second.first;
  if (const Attribute* p = ctx.node().attr("activation_params"))
    if (const auto* v = p->get<std::vector<float>>()) a.params = *v;
  if (a.params.size() < it->second.second) ctx.fail("activation '" + name + "' needs more activation_params");
  return a;
}

// Clamps to [0, 1] letting NaN through, as the HardSigmoid / HardSwish kernels do.
template <typename W>
W clamp01(W x) {
  return x < W(0) ? W(0) : x > W(1) ? W(1) : x;
}

// GELU's erf form in the work type, step by step as the written-out ops (Div, Erf, Add, Mul, Mul) compute it: fp32
// for fp32 and fp16 data, as docs/fp16-emulation.md says of activations (it was double, rounded once: not what the
// unfused graph or the Vector unit computes, and erf in double costs a third more than in fp32).
template <typename W>
W geluErf(W x) {
  return x * (W(1) + std::erf(x / std::numbers::sqrt2_v<W>)) * W(0.5);
}

// The activation as its ONNX op(s) compute it; SiLU is x · Sigmoid(x), whose Sigmoid is stored first.
template <typename S, typename W>
W activate(const Activation& a, W x) {
  const double d = static_cast<double>(x);
  switch (a.kind) {
    case Activation::None:
      return x;
    case Activation::Relu:
      return x > W(0) ? x : W(0);
    case Activation::Relu6:
      return std::min(std::max(x, W(0)), W(6));
    case Activation::Clip:
      return std::min(std::max(x, static_cast<W>(a.params[0])), static_cast<W>(a.params[1]));
    case Activation::LeakyRelu:
      return x >= W(0) ? x : static_cast<W>(a.params[0]) * x;
    case Activation::Sigmoid:
      return static_cast<W>(1 / (1 + std::exp(-d)));
    case Activation::HardSigmoid:  // in W, as the HardSigmoid and HardSwish kernels compute them (activations.cpp)
      return clamp01(static_cast<W>(a.params[0]) * x + static_cast<W>(a.params[1]));
    case Activation::HardSwish:
      return x * clamp01(x / W(6) + W(0.5));
    case Activation::Tanh:
      return static_cast<W>(std::tanh(d));
    case Activation::SiLU:
      return x * nn::roundAs<S>(static_cast<W>(1 / (1 + std::exp(-d))));
    case Activation::Gelu:
      return geluErf(x);
    case Activation::GeluTanh:
      return static_cast<W>(0.5 * d * (1 + std::tanh(std::sqrt(2 / std::numbers::pi) * (d + 0.044715 * d * d * d))));
  }
  return x;
}

// activate over n elements, the kind chosen once: the clamps (Relu, Relu6, Clip, LeakyRelu) become loops the
// compiler vectorises instead of a switch per element (a fifth of MobileNetV2's compiled run).
template <typename S, typename W>
void activateAll(const Activation& a, W* y, int64_t n) {
  const auto each = [&](auto f) {
    for (int64_t i = 0; i < n; ++i) y[i] = f(y[i]);
  };
  switch (a.kind) {
    case Activation::None: return;
    case Activation::Relu: return each([](W x) { return x > W(0) ? x : W(0); });
    case Activation::Relu6: return each([](W x) { return std::min(std::max(x, W(0)), W(6)); });
    case Activation::Clip: {
      const W lo = static_cast<W>(a.params[0]), hi = static_cast<W>(a.params[1]);
      return each([=](W x) { return std::min(std::max(x, lo), hi); });
    }
    case Activation::LeakyRelu: {
      const W alpha = static_cast<W>(a.params[0]);
      return each([=](W x) { return x >= W(0) ? x : alpha * x; });
    }
    case Activation::HardSigmoid: {  // (MobileNetV3's) the arithmetic of activate, in one loop
      const W alpha = static_cast<W>(a.params[0]), beta = static_cast<W>(a.params[1]);
      return each([=](W x) { return clamp01(alpha * x + beta); });
    }
    case Activation::HardSwish: return each([](W x) { return x * clamp01(x / W(6) + W(0.5)); });
    case Activation::Gelu: return each([](W x) { return geluErf(x); });
    default: return each([&](W x) { return activate<S>(a, x); });
  }
}

// y[i] += t[walk] with t broadcast (numpy, one-directional) into dims, rounding each sum as an Add would store it.
template <typename S, typename W>
void addBroadcast(const KernelContext& ctx, std::span<W> y, const std::vector<int64_t>& dims, const Tensor& t,
                  const char* what) {
  if (t.dtype() != dtypeOf<S>()) ctx.fail(std::string(what) + " has another element type");
  if (broadcastShapes(ctx, {&dims, &t.dims()}) != dims) ctx.fail(std::string(what) + " would enlarge the output");
  const uint8_t* p = t.data();
  if (t.dims() == dims) {  // a residual of the output's own shape (FusedConv's Z): in chunks, rounded in bulk
    constexpr size_t kChunk = 1024;
    W wide[kChunk];
    for (size_t i = 0; i < y.size(); i += kChunk) {
      const size_t m = std::min(kChunk, y.size() - i);
      if constexpr (std::is_same_v<S, Half> && std::is_same_v<W, float>) {
        if (reinterpret_cast<uintptr_t>(p) % alignof(uint16_t) == 0)
          halvesToFloats(reinterpret_cast<const uint16_t*>(p) + i, wide, m);
        else
          for (size_t j = 0; j < m; ++j) wide[j] = Elem<S>::load(p, static_cast<int64_t>(i + j));
      } else {
        for (size_t j = 0; j < m; ++j) wide[j] = static_cast<W>(Elem<S>::load(p, static_cast<int64_t>(i + j)));
      }
      for (size_t j = 0; j < m; ++j) y[i + j] += wide[j];
      nn::roundAllAs<S>(y.data() + i, static_cast<int64_t>(m));
    }
    return;
  }
  const int64_t row = dims.empty() ? 1 : dims.back();
  if (t.numel() == row && !t.dims().empty() && t.dims().back() == row && row > 0) {  // a bias along the last axis
    // Read once; each row's sums rounded in bulk (for fp16 through F16C: a scalar rounding per element was a quarter
    // of a compiled fp16 BERT-base run).
    std::vector<W> bias(static_cast<size_t>(row));
    for (int64_t j = 0; j < row; ++j) bias[size_t(j)] = static_cast<W>(Elem<S>::load(p, j));
    for (size_t i = 0; i < y.size(); i += static_cast<size_t>(row)) {
      for (int64_t j = 0; j < row; ++j) y[i + size_t(j)] += bias[size_t(j)];
      nn::roundAllAs<S>(y.data() + i, row);
    }
    return;
  }
  BroadcastWalker w(dims, {&t.dims()});
  for (size_t i = 0; i < y.size(); ++i, w.next())
    y[i] = nn::roundAs<S>(y[i] + static_cast<W>(Elem<S>::load(p, w.offset(0))));
}

template <typename S>
Tensor fusedMatMulTyped(const KernelContext& ctx, const Tensor& a, const Tensor& b, const Tensor* bias) {
  using W = nn::Work<S>;
  const Node& node = ctx.node();
  const Activation act = activationOf(ctx);
  const nn::MatMulPlan p =
      nn::matMulPlan(ctx, a.dims(), b.dims(), node.attrInt("trans_a", 0) != 0, node.attrInt("trans_b", 0) != 0);
  nn::Result<S, W> y(ctx, a.dtype(), p.outDims);  // size check before any work
  const nn::Operand<S, W> av(ctx, a), bv(ctx, b);    // fp32 read in place (as MatMul)
  nn::matMul(p, static_cast<W>(node.attrFloat("alpha", 1.0f)), av.data(), bv.data(), y.data());
  nn::roundAllAs<S>(y.data(), y.numel());
  if (bias) addBroadcast<S, W>(ctx, std::span<W>(y.data(), static_cast<size_t>(y.numel())), p.outDims, *bias, "Bias");
  activateAll<S>(act, y.data(), y.numel());
  return y.finish();
}

template <typename S>
Tensor fusedConvTyped(const KernelContext& ctx, const Tensor& x, const Tensor& w) {
  using W = nn::ConvWork<S>;
  const Tensor* b = ctx.input(2);
  const Tensor* z = ctx.input(3);
  if (w.dtype() != x.dtype() || (b && b->dtype() != x.dtype())) ctx.fail("W and B must have X's element type");
  const Activation act = activationOf(ctx);
  const nn::ConvShape s = nn::convShape(ctx, x.dims(), w.dims(), b);
  if (z && z->dims() != s.outDims) ctx.fail("Z must have the convolution output's shape");
  nn::Result<S, W> y(ctx, x.dtype(), s.outDims);
  const nn::Operand<S, W> xv(ctx, x), wv(ctx, w);
  const std::optional<nn::Operand<S, W>> bv = b ? std::optional<nn::Operand<S, W>>(std::in_place, ctx, *b) : std::nullopt;
  nn::convolve(ctx, s, xv.data(), wv.data(), bv ? bv->data() : nullptr, y.data());
  nn::roundAllAs<S>(y.data(), y.numel());
  if (z) addBroadcast<S, W>(ctx, std::span<W>(y.data(), static_cast<size_t>(y.numel())), s.outDims, *z, "Z");
  activateAll<S>(act, y.data(), y.numel());
  return y.finish();
}

std::vector<Tensor> fusedMatMul(const KernelContext& ctx) {
  const Tensor& a = ctx.required(0);
  const Tensor& b = ctx.required(1);
  if (a.dtype() != b.dtype()) ctx.fail("A and B have different element types");
  std::vector<Tensor> out;
  dispatch<kFloats>(a.dtype(), [&](auto tag) {
    out.push_back(fusedMatMulTyped<typename decltype(tag)::type>(ctx, a, b, ctx.input(2)));
  });
  return out;
}

std::vector<Tensor> fusedConv(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  std::vector<Tensor> out;
  dispatch<kFloats>(x.dtype(), [&](auto tag) {
    out.push_back(fusedConvTyped<typename decltype(tag)::type>(ctx, x, ctx.required(1)));
  });
  return out;
}

// Attention: Q [B, Sq, H·D], K [B, Skv, H·D], V [B, Skv, H·Dv] -> Y [B, Sq, H·Dv], per batch and head.
template <typename S>
Tensor attentionTyped(const KernelContext& ctx, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor* mask) {
  using W = nn::Work<S>;
  const Node& node = ctx.node();
  if (q.dims().size() != 3 || k.dims().size() != 3 || v.dims().size() != 3) ctx.fail("Q, K and V must be 3-D");
  if (k.dtype() != q.dtype() || v.dtype() != q.dtype()) ctx.fail("Q, K and V must share an element type");
  const int64_t heads = node.attrInt("num_heads", 0);
  if (heads < 1) ctx.fail("num_heads must be positive");
  const int64_t batch = q.dims()[0], sq = q.dims()[1], skv = k.dims()[1];
  if (k.dims()[0] != batch || v.dims()[0] != batch || v.dims()[1] != skv) ctx.fail("Q, K and V do not agree");
  if (q.dims()[2] != k.dims()[2] || q.dims()[2] % heads != 0 || v.dims()[2] % heads != 0)
    ctx.fail("hidden widths do not split into num_heads heads");
  const int64_t d = q.dims()[2] / heads, dv = v.dims()[2] / heads;
  const std::vector<int64_t> outDims{batch, sq, v.dims()[2]};
  OutBuffer probe(ctx, q.dtype(), outDims);
  const W scale = static_cast<W>(node.attrFloat("scale", 1.0f));
  // The mask, broadcast over the scores [B, H, Sq, Skv].
  const std::vector<int64_t> scoreDims{batch, heads, sq, skv};
  const bool boolMask = mask && mask->dtype() == DType::Bool;
  if (mask && !boolMask && mask->dtype() != q.dtype()) ctx.fail("Mask must be bool or of Q's element type");
  if (mask && broadcastShapes(ctx, {&scoreDims, &mask->dims()}) != scoreDims)
    ctx.fail("Mask does not broadcast to [B, H, Sq, Skv]");
  if (boolMask && !hasAttr(node, "mask_filter_value")) ctx.fail("a bool Mask needs mask_filter_value");
  const W fill = nn::roundAs<S>(static_cast<W>(node.attrFloat("mask_filter_value", 0.0f)));
  // An empty Y needs no work; a non-empty one bounds every per-head extent below by a real tensor's size.
  if (probe.numel() == 0) return probe.finish();
  const std::vector<W> qv = nn::loadAll<S>(ctx, q), kv = nn::loadAll<S>(ctx, k), vv = nn::loadAll<S>(ctx, v);
  const std::optional<int64_t> scores = checkedMul(sq, skv);
  if (!scores) ctx.fail("score matrix size overflows");
  const int64_t scoreCount = *scores;
  checkScratch(ctx, scoreCount + (sq + skv) * (d + dv) + sq * dv, sizeof(W));
  std::vector<W> qh(static_cast<size_t>(sq * d)), kh(static_cast<size_t>(skv * d)), vh(static_cast<size_t>(skv * dv));
  std::vector<W> s(static_cast<size_t>(scoreCount)), o(static_cast<size_t>(sq * dv)),
      y(static_cast<size_t>(probe.numel()));
  const std::vector<int64_t> maskStrides = mask ? broadcastStrides(scoreDims, mask->dims()) : std::vector<int64_t>{};
  // One head's [rows, width] slice of a [B, rows, H·width] tensor.
  const auto split = [&](const std::vector<W>& from, int64_t bi, int64_t h, int64_t rows, int64_t width,
                         std::vector<W>& to) {
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < width; ++c)
        to[static_cast<size_t>(r * width + c)] =
            from[static_cast<size_t>((bi * rows + r) * heads * width + h * width + c)];
  };
  for (int64_t bi = 0; bi < batch; ++bi)
    for (int64_t h = 0; h < heads; ++h) {
      split(qv, bi, h, sq, d, qh);
      split(kv, bi, h, skv, d, kh);
      split(vv, bi, h, skv, dv, vh);
      nn::gemm(false, true, sq, skv, d, W(1), qh.data(), kh.data(), W(0), s.data());
      // Scaled, then masked, row by row (the mask's offset found once per row, not per score); each stored
      // intermediate rounded to S a row at a time (fp16 in bulk, through F16C).
      for (int64_t i = 0; i < sq; ++i) {
        W* row = s.data() + i * skv;
        nn::roundAllAs<S>(row, skv);
        for (int64_t j = 0; j < skv; ++j) row[j] *= scale;
        nn::roundAllAs<S>(row, skv);
        if (!mask) continue;
        const int64_t base = bi * maskStrides[0] + h * maskStrides[1] + i * maskStrides[2], step = maskStrides[3];
        const uint8_t* m = mask->data();
        if (boolMask) {
          for (int64_t j = 0; j < skv; ++j) row[j] = m[base + j * step] != 0 ? fill : row[j];
        } else {
          for (int64_t j = 0; j < skv; ++j) row[j] += static_cast<W>(Elem<S>::load(m, base + j * step));
          nn::roundAllAs<S>(row, skv);
        }
      }
      nn::softmaxRows(s.data(), sq, skv, 1, nn::SoftmaxKind::Softmax);
      nn::roundAllAs<S>(s.data(), static_cast<int64_t>(s.size()));
      nn::gemm(false, false, sq, dv, skv, W(1), s.data(), vh.data(), W(0), o.data());
      for (int64_t i = 0; i < sq; ++i)
        for (int64_t c = 0; c < dv; ++c)
          y[static_cast<size_t>((bi * sq + i) * heads * dv + h * dv + c)] = o[static_cast<size_t>(i * dv + c)];
    }
  return nn::storeAll<S>(ctx, outDims, y);
}

std::vector<Tensor> attention(const KernelContext& ctx) {
  const Tensor& q = ctx.required(0);
  std::vector<Tensor> out;
  dispatch<kFloats>(q.dtype(), [&](auto tag) {
    out.push_back(attentionTyped<typename decltype(tag)::type>(ctx, q, ctx.required(1), ctx.required(2), ctx.input(3)));
  });
  return out;
}

// Softmax over the trailing block [axis, rank) of x (after adding bias when given), as the fused rows are defined.
template <typename S>
Tensor rowSoftmax(const KernelContext& ctx, const Tensor& x, const Tensor* bias) {
  using W = nn::Work<S>;
  const auto rank = static_cast<int64_t>(x.dims().size());
  if (rank == 0) ctx.fail("X must have rank 1 or more");
  const auto axis = static_cast<size_t>(normalizeAxis(ctx, ctx.node().attrInt("axis", -1), rank, "axis"));
  std::vector<W> v = nn::loadAll<S>(ctx, x);
  if (bias) addBroadcast<S, W>(ctx, std::span<W>(v), x.dims(), *bias, "Bias");
  if (x.numel() > 0) {
    int64_t n = 1;
    for (size_t dd = axis; dd < x.dims().size(); ++dd) n *= x.dims()[dd];
    nn::softmaxRows(v.data(), x.numel() / n, n, 1, nn::SoftmaxKind::Softmax);
  }
  return nn::storeAll<S>(ctx, x.dims(), v);
}

std::vector<Tensor> biasSoftmax(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  std::vector<Tensor> out;
  dispatch<kFloats>(
      x.dtype(), [&](auto tag) { out.push_back(rowSoftmax<typename decltype(tag)::type>(ctx, x, &ctx.required(1))); });
  return out;
}

// Dropout only when it changes nothing: inference (training_mode absent or false) or a ratio of 0. A real
// training-mode dropout draws random numbers, which have no reference value: declined.
std::vector<Tensor> softmaxDropout(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  bool training = false;
  if (const Tensor* t = ctx.input(2)) {
    if (t->dtype() != DType::Bool || t->numel() != 1) ctx.fail("training_mode must be a bool scalar");
    training = t->data()[0] != 0;
  }
  double ratio = ctx.node().attrFloat("ratio", 0.5f);
  if (const Tensor* r = ctx.input(1)) {
    if (!isFloating(r->dtype()) || r->numel() != 1) ctx.fail("ratio must be a floating scalar");
    ratio = r->toDouble()[0];
  }
  if (training && ratio != 0.0) return {};
  std::vector<Tensor> out;
  dispatch<kFloats>(x.dtype(),
                    [&](auto tag) { out.push_back(rowSoftmax<typename decltype(tag)::type>(ctx, x, nullptr)); });
  if (out.empty() || ctx.node().numOutputs() < 2) return out;
  OutBuffer mask(ctx, DType::Bool, x.dims());  // every element kept
  std::fill(mask.data(), mask.data() + mask.numel(), uint8_t{1});
  out.push_back(mask.finish());
  return out;
}

}  // namespace

void registerFusedNnKernels(KernelRegistry& r) {
  r.add("FusedMatMul", fusedMatMul, "kiln");
  r.add("FusedConv", fusedConv, "kiln");
  r.add("Attention", attention, "kiln");
  r.add("BiasSoftmax", biasSoftmax, "kiln");
  r.add("SoftmaxDropout", softmaxDropout, "kiln");
}

}  // namespace kiln::kernels

namespace kiln::kernels {

std::optional<Tensor> convolveStoredNc1hwc0(const Node& n, const std::vector<const Tensor*>& inputs,
                                            const std::vector<int64_t>& xLogical, const KernelLimits& limits,
                                            std::span<float> into, std::span<float> workspace) {
  const bool fused = n.domain() == "kiln" && n.opType() == "FusedConv";
  if (!fused && !(n.domain().empty() && n.opType() == "Conv")) return std::nullopt;
  const KernelContext ctx(n, inputs, limits);
  const Tensor &x = ctx.required(0), &w = ctx.required(1);
  const Tensor* b = ctx.input(2);
  const Tensor* z = fused ? ctx.input(3) : nullptr;
  if (x.dtype() != DType::Float || w.dtype() != DType::Float || (b && b->dtype() != DType::Float) ||
      (z && z->dtype() != DType::Float) || xLogical.size() != 4)
    return std::nullopt;
  constexpr int64_t c0 = 16;
  const auto blocks = [](int64_t c) { return (c + c0 - 1) / c0; };
  if (x.dims() != std::vector<int64_t>{xLogical[0], blocks(xLogical[1]), xLogical[2], xLogical[3], c0})
    return std::nullopt;
  const nn::ConvShape s = nn::convShape(ctx, xLogical, w.dims(), b);
  if (s.window.rank() != 2) return std::nullopt;
  const std::vector<int64_t> stored{s.batch, blocks(s.outChannels), s.window.out[0], s.window.out[1], c0};
  if (z && z->dims() != stored) return std::nullopt;
  const Activation act = fused ? activationOf(ctx) : Activation{};
  const int64_t count = *checkedProduct(stored);
  const auto overlaps = [&](const Tensor* t) {
    const auto* p = reinterpret_cast<const uint8_t*>(into.data());
    return t && t->data() < p + into.size_bytes() && p < t->data() + t->byteSize();
  };
  const bool inPlace = static_cast<int64_t>(into.size()) == count &&
                       std::none_of(inputs.begin(), inputs.end(), [&](const Tensor* t) { return overlaps(t); });
  std::optional<nn::Result<float, float>> result;
  if (!inPlace) result.emplace(ctx, DType::Float, stored);
  float* y = inPlace ? into.data() : result->data();
  const nn::Operand<float, float> xv(ctx, x), wv(ctx, w);
  const std::optional<nn::Operand<float, float>> bv =
      b ? std::optional<nn::Operand<float, float>>(std::in_place, ctx, *b) : std::nullopt;
  if (!nn::convolveNc1hwc0(ctx, s, xv.data(), wv.data(), bv ? bv->data() : nullptr, y, workspace)) return std::nullopt;
  // The residual (it has the output's layout: element by element, spare lanes 0 + 0), then the activation, a piece
  // at a time so each piece is still in cache for the second step (one pass over the output, not two).
  const std::optional<nn::Operand<float, float>> zv =
      z ? std::optional<nn::Operand<float, float>>(std::in_place, ctx, *z) : std::nullopt;
  constexpr int64_t kPiece = 4096;
  if (z || act.kind != Activation::None)
    for (int64_t i0 = 0; i0 < count; i0 += kPiece) {
      const int64_t piece = std::min(kPiece, count - i0);
      if (zv) {
        float* const yi = y + i0;
        const float* const zi = zv->data() + i0;
        for (int64_t i = 0; i < piece; ++i) yi[i] += zi[i];
      }
      if (act.kind != Activation::None) activateAll<float>(act, y + i0, piece);
    }
  if (act.kind != Activation::None) {
    // An activation of 0 need not be 0: the last block's spare lanes back to 0.
    if (const int64_t lanes = s.outChannels % c0; lanes != 0) {
      const int64_t plane = s.window.out[0] * s.window.out[1], c1 = blocks(s.outChannels);
      for (int64_t image = 0; image < s.batch; ++image) {
        float* last = y + (image * c1 + c1 - 1) * plane * c0;
        for (int64_t i = 0; i < plane; ++i) std::fill_n(last + i * c0 + lanes, c0 - lanes, 0.0f);
      }
    }
  }
  return inPlace ? Tensor() : result->finish();
}

}  // namespace kiln::kernels
