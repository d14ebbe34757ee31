// Element-wise ops on signs, rounding, classification and bits: Sign, Round (half to even), IsNaN, IsInf, BitShift
// and the Bitwise family. Shifts by the element width or more give 0 instead of undefined behaviour.
#include <cmath>

#include "kernels/kernel_util.h"
#include "ir/graph.h"

namespace kiln::kernels {
namespace {

std::vector<Tensor> sign(const KernelContext& c) {
  return unary<kNumeric>(c, [](auto x) {
    using C = decltype(x);
    if (x > C(0)) return C(1);
    if constexpr (std::is_signed_v<C>)
      if (x < C(0)) return C(-1);
    return x;  // 0 (or -0) and NaN stay as they are
  });
}

std::vector<Tensor> round(const KernelContext& c) {
  return unary<kFloats>(c, [](auto x) {
    using C = decltype(x);
    const C f = std::floor(x);
    const C frac = x - f;
    if (frac < C(0.5)) return f;
    if (frac > C(0.5)) return f + C(1);
    return std::fmod(f, C(2)) == C(0) ? f : f + C(1);  // a tie goes to the even neighbour (inf, NaN pass through)
  });
}

// A float classification into bool.
template <typename Pred>
std::vector<Tensor> classify(const KernelContext& ctx, Pred pred) {
  const Tensor& x = ctx.required(0);
  std::vector<Tensor> out;
  dispatch<kFloats>(x.dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    out.push_back(mapUnary<S, bool>(ctx, x, [&](ComputeOf<S> v) { return pred(static_cast<double>(v)); }));
  });
  return out;
}

std::vector<Tensor> isNan(const KernelContext& c) {
  return classify(c, [](double v) { return std::isnan(v); });
}
std::vector<Tensor> isInf(const KernelContext& c) {
  const bool pos = c.node().attrInt("detect_positive", 1) != 0;
  const bool neg = c.node().attrInt("detect_negative", 1) != 0;
  return classify(c, [pos, neg](double v) { return std::isinf(v) && (v > 0 ? pos : neg); });
}

std::vector<Tensor> bitShift(const KernelContext& c) {
  const std::string dir = c.node().attrString("direction", "");
  if (dir != "LEFT" && dir != "RIGHT") c.fail("direction must be LEFT or RIGHT");
  const bool left = dir == "LEFT";
  return binary<kUnsigned>(c, [left](auto x, auto s, bool&) {
    using C = decltype(x);
    if (static_cast<uint64_t>(s) >= sizeof(C) * 8) return C(0);
    return static_cast<C>(left ? x << s : x >> s);
  });
}

std::vector<Tensor> bitwiseAnd(const KernelContext& c) {
  return binary<kInts>(c, [](auto x, auto y, bool&) { return x & y; });
}
std::vector<Tensor> bitwiseOr(const KernelContext& c) {
  return binary<kInts>(c, [](auto x, auto y, bool&) { return x | y; });
}
std::vector<Tensor> bitwiseXor(const KernelContext& c) {
  return binary<kInts>(c, [](auto x, auto y, bool&) { return x ^ y; });
}
std::vector<Tensor> bitwiseNot(const KernelContext& c) {
  return unary<kInts>(c, [](auto x) { return ~x; });
}

}  // namespace

void registerElementwiseBitsKernels(KernelRegistry& r) {
  r.add("Sign", sign);
  r.add("Round", round);
  r.add("IsNaN", isNan);
  r.add("IsInf", isInf);
  r.add("BitShift", bitShift);
  r.add("BitwiseAnd", bitwiseAnd);
  r.add("BitwiseOr", bitwiseOr);
  r.add("BitwiseXor", bitwiseXor);
  r.add("BitwiseNot", bitwiseNot);
}

}  // namespace kiln::kernels
