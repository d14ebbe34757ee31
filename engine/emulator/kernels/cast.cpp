// Cast and CastLike between every numeric type and bool. Rounding is real (to nearest even) for every narrowing float
// conversion, including double or int64 to fp16/bf16: those go through float with round-to-odd so that rounding
// twice cannot land on the wrong neighbour. Float to integer truncates; NaN and out-of-range values (undefined in
// C++) become 0 and the saturated bound. Integer to integer wraps (two's complement), as numpy does.
#include <cmath>

#include "emulator/kernels/kernel_util.h"
#include "ir/graph.h"
#include "ir/shape.h"

namespace kiln::kernels {
namespace {

// double -> float rounding to odd: an inexact result keeps a sticky last bit, so the later rounding to fp16/bf16
// (which drop at least 13 bits) sees exactly which side of a tie the value was on.
float toFloatRoundToOdd(double d) {
  const float f = static_cast<float>(d);
  if (std::isnan(d) || static_cast<double>(f) == d) return f;
  float truncated = std::fabs(static_cast<double>(f)) > std::fabs(d) ? std::nextafter(f, 0.0f) : f;
  uint32_t bits;
  std::memcpy(&bits, &truncated, sizeof bits);
  bits |= 1u;
  std::memcpy(&truncated, &bits, sizeof bits);
  return truncated;
}

// The value as the output's compute type, with the conversion rules above.
template <typename SOut, typename CIn>
void store(uint8_t* out, int64_t i, CIn v) {
  using COut = ComputeOf<SOut>;
  if constexpr (std::is_same_v<SOut, bool>) {
    Elem<bool>::store(out, i, v != CIn(0));  // NaN is non-zero: true, as numpy
  } else if constexpr (std::is_same_v<SOut, Half> || std::is_same_v<SOut, BFloat>) {
    const float f = std::is_same_v<CIn, float> ? static_cast<float>(v) : toFloatRoundToOdd(static_cast<double>(v));
    const uint16_t bits = std::is_same_v<SOut, Half> ? floatToHalf(f) : floatToBfloat16(f);
    Elem<uint16_t>::store(out, i, bits);
  } else if constexpr (kIsInt<SOut> && std::is_floating_point_v<CIn>) {
    Elem<SOut>::store(out, i, floatToInt<COut>(static_cast<double>(v)));
  } else {
    Elem<SOut>::store(out, i, static_cast<COut>(v));
  }
}

}  // namespace
}  // namespace kiln::kernels

namespace kiln {

Tensor convertTensor(const Tensor& x, DType to, int64_t maxOutputBytes) {
  if (to == x.dtype()) return x;
  const std::optional<int64_t> bytes = checkedMul(x.numel(), dtypeSize(to));
  if (!bytes || *bytes > maxOutputBytes)
    throw KernelOutputTooLarge(
        "Cast: output of " + (bytes ? std::to_string(*bytes) : std::string("overflowing")) + " bytes exceeds the limit",
        bytes.value_or(INT64_MAX));
  std::string buffer(static_cast<size_t>(*bytes), '\0');
  uint8_t* out = reinterpret_cast<uint8_t*>(buffer.data());
  bool supported = false;
  using namespace kernels;
  dispatch<kAll>(x.dtype(), [&](auto inTag) {
    using SIn = typename decltype(inTag)::type;
    supported = dispatch<kAll>(to, [&](auto outTag) {
      using SOut = typename decltype(outTag)::type;
      for (int64_t i = 0; i < x.numel(); ++i) kernels::store<SOut>(out, i, Elem<SIn>::load(x.data(), i));
    });
  });
  if (!supported) return Tensor();
  return Tensor::fromBytes(to, x.dims(), std::move(buffer));
}

}  // namespace kiln

namespace kiln::kernels {
namespace {

std::vector<Tensor> castOrDecline(const KernelContext& ctx, const Tensor& x, DType to) {
  Tensor t = convertTensor(x, to, ctx.limits().maxOutputBytes);
  if (!t.valid()) return {};
  return {t};
}

std::vector<Tensor> cast(const KernelContext& ctx) {
  const auto to = dtypeFromOnnx(static_cast<int>(ctx.node().attrInt("to", 0)));
  if (!to) ctx.fail("attribute 'to' is not a known element type");
  return castOrDecline(ctx, ctx.required(0), *to);
}

// CastLike(x, like): the target type is like's element type.
std::vector<Tensor> castLike(const KernelContext& ctx) {
  return castOrDecline(ctx, ctx.required(0), ctx.required(1).dtype());
}

}  // namespace

void registerCastKernels(KernelRegistry& r) {
  r.add("Cast", cast);
  r.add("CastLike", castLike);
}

}  // namespace kiln::kernels
