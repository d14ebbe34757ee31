// Arithmetic element-wise kernels: unary math, binary arithmetic with numpy broadcasting, variadic Min/Max/Sum/Mean.
// fp16/bf16 compute in float and round once per op (as the device's vector unit does); integers wrap on overflow and
// an integer division by zero is declined (empty result) rather than given a made-up value.
#include <cmath>

#include "kernels/kernel_util.h"
#include "ir/graph.h"

namespace kiln::kernels {
namespace {

// Min, Max, Sum, Mean take one or more inputs, broadcast together; folded pairwise from the left.
template <unsigned Set, typename Fn>
std::vector<Tensor> variadic(const KernelContext& ctx, Fn fn, bool average = false) {
  if (ctx.numInputs() == 0) ctx.fail("needs at least one input");
  Tensor acc = ctx.required(0);
  for (size_t i = 1; i < ctx.numInputs(); ++i)
    if (ctx.required(i).dtype() != acc.dtype()) ctx.fail("input element types differ");
  bool supported = false;
  dispatch<Set>(acc.dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    using C = ComputeOf<S>;
    supported = true;
    for (size_t i = 1; i < ctx.numInputs(); ++i)
      acc = mapBinary<S, S, S>(ctx, acc, ctx.required(i), [&](C x, C y) { return static_cast<C>(fn(x, y)); });
    if (ctx.numInputs() == 1) acc = mapUnary<S, S>(ctx, acc, [](C x) { return x; });  // own copy, checked size
    if (average) {
      const C n = static_cast<C>(ctx.numInputs());
      acc = mapUnary<S, S>(ctx, acc, [n](C x) { return static_cast<C>(x / n); });
    }
  });
  if (!supported) return {};
  return {acc};
}

// Minimum/maximum that propagate NaN like numpy's minimum/maximum.
template <typename C>
C pickMin(C x, C y) {
  if constexpr (std::is_floating_point_v<C>)
    if (std::isnan(x) || std::isnan(y)) return std::isnan(x) ? x : y;
  return y < x ? y : x;
}
template <typename C>
C pickMax(C x, C y) {
  if constexpr (std::is_floating_point_v<C>)
    if (std::isnan(x) || std::isnan(y)) return std::isnan(x) ? x : y;
  return x < y ? y : x;
}

template <typename C>
C integerDivide(C x, C y, bool& undefined) {
  if (y == 0) {
    undefined = true;
    return 0;
  }
  if constexpr (std::is_signed_v<C>)
    if (y == C(-1)) return wrapSub(C(0), x);  // INT_MIN / -1 overflows: wrap
  return static_cast<C>(x / y);
}

// Mod: fmod=1 keeps the dividend's sign (C fmod); fmod=0 the divisor's (Python / numpy mod).
template <typename C>
C modulo(C x, C y, bool fmod, bool& undefined) {
  if constexpr (std::is_floating_point_v<C>) {
    C r = std::fmod(x, y);
    if (!fmod && r != 0 && ((r < 0) != (y < 0))) r += y;
    return r;
  } else {
    if (y == 0) {
      undefined = true;
      return 0;
    }
    if constexpr (std::is_signed_v<C>) {
      if (y == C(-1)) return 0;
      C r = static_cast<C>(x % y);
      if (!fmod && r != 0 && ((r < 0) != (y < 0))) r = static_cast<C>(r + y);
      return r;
    } else {
      return static_cast<C>(x % y);
    }
  }
}

// Integer power by squaring, wrapping like repeated multiplication would; a negative exponent truncates 1/x^-e.
template <typename C>
C integerPower(C base, int64_t e) {
  if (e < 0) {
    if (base == 1) return 1;
    if constexpr (std::is_signed_v<C>)
      if (base == C(-1)) return (e % 2) ? C(-1) : C(1);
    return 0;
  }
  C result = 1;
  while (e > 0) {
    if (e & 1) result = wrapMul(result, base);
    base = wrapMul(base, base);
    e >>= 1;
  }
  return result;
}

// Pow(X: T, Y: T1): the exponent may have another type. It is widened once to int64 (integer exponents, exact) or
// double, so only the base type multiplies the instantiations. The result has the base's type.
std::vector<Tensor> powKernel(const KernelContext& ctx) {
  const Tensor& a = ctx.required(0);
  const Tensor& b = ctx.required(1);
  if (!isInteger(b.dtype()) && !isFloating(b.dtype())) return {};
  const bool intExponent = isInteger(b.dtype());
  checkScratch(ctx, b.numel(), 8);
  const Tensor e = intExponent ? Tensor::fromVector(DType::Int64, b.dims(), b.toInt64())
                               : Tensor::fromVector(DType::Double, b.dims(), b.toDouble());
  std::vector<Tensor> out;
  dispatch<kNumeric>(a.dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    using C = ComputeOf<S>;
    if (intExponent) {
      out.push_back(mapBinary<S, int64_t, S>(ctx, a, e, [](C x, int64_t y) -> C {
        if constexpr (kIsInt<C>)
          return integerPower(x, y);
        else
          return static_cast<C>(std::pow(static_cast<double>(x), static_cast<double>(y)));
      }));
    } else if (b.numel() == 1 && e.toDouble()[0] == 2.0 && kIsFloat<S>) {
      // x², as a LayerNorm written out squares its deviations: x·x is the same rounding of the same exact product
      // (a float's square is exact in double) without a pow call per element.
      out.push_back(mapBinary<S, double, S>(ctx, a, e, [](C x, double) -> C { return static_cast<C>(double(x) * double(x)); }));
    } else {
      out.push_back(mapBinary<S, double, S>(ctx, a, e, [](C x, double y) -> C {
        const double r = std::pow(static_cast<double>(x), y);
        if constexpr (kIsInt<C>)
          return floatToInt<C>(r);
        else
          return static_cast<C>(r);
      }));
    }
  });
  return out;
}

std::vector<Tensor> add(const KernelContext& c) {
  return binary<kNumeric>(c, [](auto x, auto y, bool&) { return wrapAdd(x, y); });
}
std::vector<Tensor> sub(const KernelContext& c) {
  return binary<kNumeric>(c, [](auto x, auto y, bool&) { return wrapSub(x, y); });
}
std::vector<Tensor> mul(const KernelContext& c) {
  return binary<kNumeric>(c, [](auto x, auto y, bool&) { return wrapMul(x, y); });
}
std::vector<Tensor> div(const KernelContext& c) {
  return binary<kNumeric>(c, [](auto x, auto y, bool& undefined) {
    if constexpr (kIsInt<decltype(x)>)
      return integerDivide(x, y, undefined);
    else
      return x / y;
  });
}
std::vector<Tensor> mod(const KernelContext& c) {
  const bool fmod = c.node().attrInt("fmod", 0) != 0;
  return binary<kNumeric>(c, [fmod](auto x, auto y, bool& undefined) { return modulo(x, y, fmod, undefined); });
}
std::vector<Tensor> minK(const KernelContext& c) {
  return variadic<kNumeric>(c, [](auto x, auto y) { return pickMin(x, y); });
}
std::vector<Tensor> maxK(const KernelContext& c) {
  return variadic<kNumeric>(c, [](auto x, auto y) { return pickMax(x, y); });
}
std::vector<Tensor> sum(const KernelContext& c) {
  return variadic<kFloats>(c, [](auto x, auto y) { return x + y; });
}
std::vector<Tensor> mean(const KernelContext& c) {
  return variadic<kFloats>(
      c, [](auto x, auto y) { return x + y; }, true);
}

std::vector<Tensor> neg(const KernelContext& c) {
  return unary<kFloats | kSigned>(c, [](auto x) { return wrapSub(decltype(x)(0), x); });
}
std::vector<Tensor> abs(const KernelContext& c) {
  return unary<kNumeric>(c, [](auto x) {
    using C = decltype(x);
    if constexpr (std::is_unsigned_v<C>)
      return x;
    else if constexpr (kIsInt<C>)
      return x < 0 ? wrapSub(C(0), x) : x;
    else
      return std::fabs(x);
  });
}
std::vector<Tensor> relu(const KernelContext& c) {
  return unary<kFloats | kSigned>(c, [](auto x) { return x < 0 ? decltype(x)(0) : x; });
}
std::vector<Tensor> sqrt(const KernelContext& c) {
  return unary<kFloats>(c, [](auto x) { return std::sqrt(x); });
}
std::vector<Tensor> exp(const KernelContext& c) {
  return unary<kFloats>(c, [](auto x) { return std::exp(x); });
}
std::vector<Tensor> log(const KernelContext& c) {
  return unary<kFloats>(c, [](auto x) { return std::log(x); });
}
std::vector<Tensor> reciprocal(const KernelContext& c) {
  return unary<kFloats>(c, [](auto x) { return decltype(x)(1) / x; });
}
std::vector<Tensor> floor(const KernelContext& c) {
  return unary<kFloats>(c, [](auto x) { return std::floor(x); });
}
std::vector<Tensor> ceil(const KernelContext& c) {
  return unary<kFloats>(c, [](auto x) { return std::ceil(x); });
}
std::vector<Tensor> tanh(const KernelContext& c) {
  return unary<kFloats>(c, [](auto x) { return std::tanh(x); });
}
std::vector<Tensor> erf(const KernelContext& c) {
  return unary<kFloats>(c, [](auto x) { return std::erf(x); });
}
std::vector<Tensor> sigmoid(const KernelContext& c) {
  // Written so that exp never overflows: for x < 0 use e^x / (1 + e^x).
  return unary<kFloats>(c, [](auto x) {
    using C = decltype(x);
    if (x >= 0) return C(1) / (C(1) + std::exp(-x));
    const C e = std::exp(x);
    return e / (C(1) + e);
  });
}

}  // namespace

void registerElementwiseMathKernels(KernelRegistry& r) {
  r.add("Add", add);
  r.add("Sub", sub);
  r.add("Mul", mul);
  r.add("Div", div);
  r.add("Mod", mod);
  r.add("Pow", powKernel);
  r.add("Min", minK);
  r.add("Max", maxK);
  r.add("Sum", sum);
  r.add("Mean", mean);
  r.add("Neg", neg);
  r.add("Abs", abs);
  r.add("Relu", relu);
  r.add("Sqrt", sqrt);
  r.add("Exp", exp);
  r.add("Log", log);
  r.add("Reciprocal", reciprocal);
  r.add("Floor", floor);
  r.add("Ceil", ceil);
  r.add("Tanh", tanh);
  r.add("Erf", erf);
  r.add("Sigmoid", sigmoid);
}

}  // namespace kiln::kernels
