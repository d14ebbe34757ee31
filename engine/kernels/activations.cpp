// Activation functions: the element-wise non-linearities with attributes (LeakyRelu, Elu, Selu, Celu, HardSigmoid,
// HardSwish, Softplus, Softsign, ThresholdedRelu, Shrink, Mish, Swish-24), PRelu, Clip and Dropout.
// Float activations compute in the element's compute type (float for fp16/bf16) and round once.
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "kernels/kernel_util.h"
#include "ir/graph.h"

namespace kiln::kernels {
namespace {

// Clamps to [0, 1] letting NaN through (std::fmin/fmax would replace it).
template <typename C>
C clamp01(C x) {
  return x < C(0) ? C(0) : x > C(1) ? C(1) : x;
}

template <typename C>
C softplus(C x) {
  // log(1 + e^x) without overflowing e^x for large x.
  return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

std::vector<Tensor> leakyRelu(const KernelContext& c) {
  const float alpha = c.node().attrFloat("alpha", 0.01f);
  return unary<kFloats>(c, [alpha](auto x) { return x < 0 ? static_cast<decltype(x)>(alpha) * x : x; });
}
std::vector<Tensor> elu(const KernelContext& c) {
  const float alpha = c.node().attrFloat("alpha", 1.0f);
  return unary<kFloats>(c, [alpha](auto x) { return x < 0 ? static_cast<decltype(x)>(alpha) * std::expm1(x) : x; });
}
std::vector<Tensor> selu(const KernelContext& c) {
  const float alpha = c.node().attrFloat("alpha", 1.67326319217681884765625f);
  const float gamma = c.node().attrFloat("gamma", 1.05070102214813232421875f);
  return unary<kFloats>(c, [alpha, gamma](auto x) {
    using C = decltype(x);
    return static_cast<C>(gamma) * (x > 0 ? x : static_cast<C>(alpha) * std::expm1(x));
  });
}
std::vector<Tensor> celu(const KernelContext& c) {
  const float alpha = c.node().attrFloat("alpha", 1.0f);
  if (alpha == 0.0f) c.fail("alpha must not be 0");
  return unary<kFloats>(c, [alpha](auto x) {
    using C = decltype(x);
    const C a = static_cast<C>(alpha);
    return x > 0 ? x : a * std::expm1(x / a);
  });
}
std::vector<Tensor> hardSigmoid(const KernelContext& c) {
  const float alpha = c.node().attrFloat("alpha", 0.2f);
  const float beta = c.node().attrFloat("beta", 0.5f);
  return unary<kFloats>(c, [alpha, beta](auto x) {
    using C = decltype(x);
    return clamp01(static_cast<C>(alpha) * x + static_cast<C>(beta));
  });
}
std::vector<Tensor> hardSwish(const KernelContext& c) {
  return unary<kFloats>(c, [](auto x) {
    using C = decltype(x);
    return x * clamp01(x / C(6) + C(0.5));
  });
}
std::vector<Tensor> softplusK(const KernelContext& c) {
  return unary<kFloats>(c, [](auto x) { return softplus(x); });
}
std::vector<Tensor> softsign(const KernelContext& c) {
  return unary<kFloats>(c, [](auto x) { return x / (decltype(x)(1) + std::fabs(x)); });
}
std::vector<Tensor> mish(const KernelContext& c) {
  return unary<kFloats>(c, [](auto x) { return x * std::tanh(softplus(x)); });
}
// Swish-24: x · sigmoid(alpha · x).
std::vector<Tensor> swish(const KernelContext& c) {
  const double alpha = c.node().attrFloat("alpha", 1.0f);
  return unary<kFloats>(c, [alpha](auto x) {
    using C = decltype(x);
    return x / (C(1) + std::exp(-static_cast<C>(alpha) * x));
  });
}
std::vector<Tensor> thresholdedRelu(const KernelContext& c) {
  const float alpha = c.node().attrFloat("alpha", 1.0f);
  return unary<kFloats>(c, [alpha](auto x) { return x > static_cast<decltype(x)>(alpha) ? x : decltype(x)(0); });
}

// Shrink takes any numeric type; integers compute in double and saturate back (bias and lambd are floats).
std::vector<Tensor> shrink(const KernelContext& c) {
  const double lambd = c.node().attrFloat("lambd", 0.5f);
  const double bias = c.node().attrFloat("bias", 0.0f);
  return unary<kNumeric>(c, [lambd, bias](auto x) {
    using C = decltype(x);
    const double v = static_cast<double>(x);
    const double r = v < -lambd ? v + bias : v > lambd ? v - bias : 0.0;
    if constexpr (kIsInt<C>)
      return floatToInt<C>(r);
    else
      return static_cast<C>(r);
  });
}

// PRelu: the slope broadcasts to X (unidirectionally), so the output has X's shape. Before opset 7 a 1-D slope of
// X's channel count applied per channel (axis 1), which numpy broadcasting would line up with the last axis instead.
std::vector<Tensor> prelu(const KernelContext& c) {
  const Tensor& x = c.required(0);
  Tensor slope = c.required(1);
  const int64_t opset = c.limits().opset;
  if (opset > 0 && opset < 7 && slope.dims().size() == 1 && x.dims().size() >= 2 && slope.dims()[0] == x.dims()[1] &&
      slope.dims()[0] > 1) {
    std::vector<int64_t> perChannel(x.dims().size() - 1, 1);
    perChannel[0] = slope.dims()[0];
    slope = viewAs(slope, perChannel);
  }
  if (broadcastShapes(c, {&x.dims(), &slope.dims()}) != x.dims()) c.fail("slope does not broadcast to X's shape");
  return binary<kFloats | kInts>(c, x, slope, [](auto v, auto s, bool&) {
    using C = decltype(v);
    if constexpr (std::is_unsigned_v<C>)
      return v;  // never negative
    else
      return v < 0 ? wrapMul(s, v) : v;
  });
}

// Clip: bounds from the min/max attributes (opset < 11, floats) or the optional scalar inputs 1 and 2 (opset 11+).
std::vector<Tensor> clip(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  const Node& node = ctx.node();
  for (size_t i = 1; i <= 2; ++i) {
    const Tensor* b = ctx.input(i);
    if (b && b->dtype() != x.dtype()) ctx.fail("bound " + std::to_string(i) + " has another element type than X");
    if (b && b->numel() != 1) ctx.fail("bound " + std::to_string(i) + " must be a scalar");
  }
  std::vector<Tensor> out;
  dispatch<kNumeric>(x.dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    using C = ComputeOf<S>;
    C lo = std::numeric_limits<C>::lowest(), hi = std::numeric_limits<C>::max();
    if constexpr (std::is_floating_point_v<C>) {
      lo = -std::numeric_limits<C>::infinity();
      hi = std::numeric_limits<C>::infinity();
    }
    const auto fromAttr = [](float v) {
      if constexpr (kIsInt<C>)
        return floatToInt<C>(static_cast<double>(v));
      else
        return static_cast<C>(v);
    };
    if (hasAttr(node, "min")) lo = fromAttr(node.attrFloat("min", 0.0f));
    if (hasAttr(node, "max")) hi = fromAttr(node.attrFloat("max", 0.0f));
    if (const Tensor* b = ctx.input(1)) lo = Elem<S>::load(b->data(), 0);
    if (const Tensor* b = ctx.input(2)) hi = Elem<S>::load(b->data(), 0);
    // min(max(x, lo), hi): with lo > hi every element becomes hi, as numpy.clip gives; NaN passes through.
    out.push_back(mapUnary<S, S>(ctx, x, [lo, hi](C v) {
      C r = v < lo ? lo : v;
      return r > hi ? hi : r;
    }));
  });
  return out;
}

// Training-mode Dropout's mask as ONNX's reference implementation draws it (its conformance data come from it):
// NumPy's legacy RandomState seeded with the node's `seed` — MT19937 initialised by init_genrand, which
// std::mt19937 is too — one uniform double in [0, 1) per element in row-major order from two 32-bit draws
// ((a >> 5) · 2^26 + (b >> 6)) / 2^53, an element kept when its draw is >= ratio. Without a seed ONNX leaves the
// draw to the runtime; Kiln uses seed 0, so runs repeat.
std::vector<bool> dropoutMask(int64_t count, int64_t seed, double ratio) {
  std::mt19937 gen(static_cast<uint32_t>(seed));
  std::vector<bool> keep(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    const uint32_t a = gen() >> 5, b = gen() >> 6;
    const double u = (a * 67108864.0 + b) / 9007199254740992.0;
    keep[static_cast<size_t>(i)] = u >= ratio;
  }
  return keep;
}

// Dropout at inference (or with ratio 0) is the identity and its optional mask all true. In training mode kept
// elements are scaled by 1 / (1 - ratio), computed in the element type as NumPy does (the scale rounded to it).
std::vector<Tensor> dropout(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  const Node& node = ctx.node();
  double ratio = node.attrFloat("ratio", 0.5f);
  if (const Tensor* r = ctx.input(1)) {
    if (r->numel() != 1 || !isFloating(r->dtype())) ctx.fail("ratio must be a float scalar");
    ratio = r->toDouble()[0];
  }
  bool training = node.attrInt("is_test", 1) == 0 && hasAttr(node, "is_test");  // opset < 7
  if (const Tensor* t = ctx.input(2)) {
    if (t->numel() != 1 || t->dtype() != DType::Bool) ctx.fail("training_mode must be a bool scalar");
    training = t->data()[0] != 0;
  }
  if (!(ratio >= 0.0 && ratio < 1.0)) ctx.fail("ratio must be in [0, 1)");
  if (node.numOutputs() == 0 || node.numOutputs() > 2) ctx.fail("Dropout has one or two outputs");
  std::vector<Tensor> out;
  OutBuffer mask(ctx, DType::Bool, x.dims());
  if (!training || ratio == 0.0) {
    out.push_back(x);
    std::memset(mask.data(), 1, static_cast<size_t>(mask.numel()));
  } else {
    const std::vector<bool> keep = dropoutMask(x.numel(), node.attrInt("seed", 0), ratio);
    for (int64_t i = 0; i < mask.numel(); ++i) mask.data()[i] = keep[static_cast<size_t>(i)] ? 1 : 0;
    dispatch<kFloats>(x.dtype(), [&](auto tag) {
      using S = typename decltype(tag)::type;
      using C = ComputeOf<S>;
      OutBuffer y(ctx, x.dtype(), x.dims());
      const C scale = static_cast<C>(1.0 / (1.0 - ratio));
      for (int64_t i = 0; i < y.numel(); ++i)
        Elem<S>::store(y.data(), i, keep[static_cast<size_t>(i)] ? static_cast<C>(Elem<S>::load(x.data(), i) * scale) : C(0));
      out.push_back(y.finish());
    });
  }
  if (node.numOutputs() == 2) out.push_back(mask.finish());
  return out;
}

}  // namespace

void registerActivationKernels(KernelRegistry& r) {
  r.add("LeakyRelu", leakyRelu);
  r.add("Elu", elu);
  r.add("Selu", selu);
  r.add("Celu", celu);
  r.add("HardSigmoid", hardSigmoid);
  r.add("HardSwish", hardSwish);
  r.add("Softplus", softplusK);
  r.add("Softsign", softsign);
  r.add("Mish", mish);
  r.add("Swish", swish);
  r.add("ThresholdedRelu", thresholdedRelu);
  r.add("Shrink", shrink);
  r.add("PRelu", prelu);
  r.add("Clip", clip);
  r.add("Dropout", dropout);
}

}  // namespace kiln::kernels
