// Cast and CastLike between every numeric type and bool. Rounding is real (to nearest even) for every narrowing float
// conversion, including double or int64 to fp16/bf16: those go through float with round-to-odd so that rounding
// twice cannot land on the wrong neighbour. Float to integer truncates; NaN and out-of-range values (undefined in
// C++) become 0 and the saturated bound. Integer to integer wraps (two's complement), as numpy does. To and from
// string: numbers print as the shortest text that reads back to the same value (numpy's str), bools as True/False;
// text parses as a number ("NaN", "INF", "+INF", "-INF" in any case), integers without a detour through double.
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "ir/low_bit_types.h"
#include "kernels/kernel_util.h"
#include "ir/graph.h"
#include "ir/shape.h"
#include "util/parallel_for.h"
#include "kernels/cast_rounding.h"

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

void roundDoublesToHalves(const double* in, uint16_t* out, size_t n) {
  constexpr size_t kChunk = 1024;
  float narrow[kChunk];
  for (size_t i = 0; i < n; i += kChunk) {
    const size_t m = std::min(kChunk, n - i);
    for (size_t j = 0; j < m; ++j) narrow[j] = toFloatRoundToOdd(in[i + j]);
    floatsToHalves(narrow, out + i, m);
  }
}

}  // namespace kiln::kernels

namespace kiln {

namespace {

template <typename T>
std::string shortest(T v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

Tensor toStrings(const Tensor& x) {
  std::vector<std::string> out(static_cast<size_t>(x.numel()));
  using namespace kernels;
  const bool supported = dispatch<kAll>(x.dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    for (int64_t i = 0; i < x.numel(); ++i) {
      const auto v = Elem<S>::load(x.data(), i);
      std::string& s = out[size_t(i)];
      if constexpr (std::is_same_v<S, bool>) s = v ? "True" : "False";
      else if constexpr (std::is_same_v<decltype(v), double>) s = shortest(v);
      else if constexpr (std::is_floating_point_v<decltype(v)>) s = shortest(static_cast<float>(v));
      else s = std::to_string(v);
    }
  });
  return supported ? Tensor(x.dims(), std::move(out)) : Tensor();
}

// Text as a number: integers exactly (int64), the rest through double. Throws for text that is not a number.
Tensor fromStrings(const Tensor& x, DType to, int64_t maxOutputBytes) {
  const bool integral = to != DType::Float && to != DType::Double && to != DType::Float16 && to != DType::BFloat16 &&
                        to != DType::Bool;
  std::vector<double> reals;
  std::vector<int64_t> ints;
  for (const std::string& text : x.strings()) {
    const char* begin = text.c_str();
    char* end = nullptr;
    std::string lower;
    for (char c : text) lower += char(std::tolower(static_cast<unsigned char>(c)));
    if (integral) {
      ints.push_back(std::strtoll(begin, &end, 10));
    } else if (lower == "nan" || lower == "+nan" || lower == "-nan") {
      reals.push_back(std::nan(""));
      continue;
    } else if (lower == "inf" || lower == "+inf" || lower == "infinity" || lower == "-inf" || lower == "-infinity") {
      reals.push_back(lower[0] == '-' ? -INFINITY : INFINITY);
      continue;
    } else {
      reals.push_back(std::strtod(begin, &end));
    }
    if (text.empty() || !end || *end != '\0') throw std::runtime_error("Cast: '" + text + "' is not a number");
  }
  const Tensor wide = integral ? Tensor::fromVector(DType::Int64, x.dims(), ints)
                               : Tensor::fromVector(DType::Double, x.dims(), reals);
  return convertTensor(wide, to, maxOutputBytes);
}

}  // namespace

Tensor convertTensor(const Tensor& x, DType to, int64_t maxOutputBytes) {
  return castTensor(x, to, true, maxOutputBytes);
}

Tensor castTensor(const Tensor& x, DType to, bool saturate, int64_t maxOutputBytes, E8M0Round round) {
  if (to == x.dtype()) return x;
  // The low-bit types (float8, float4, int4): widened to fp32 / int8 on the way in, narrowed from fp32 or int64 on
  // the way out, so every other pair of types keeps the one conversion below.
  if (isLowBitFloat(x.dtype()) || isPacked(x.dtype())) {
    if (to == DType::String) return Tensor();
    return castTensor(widenLowBit(x), to, saturate, maxOutputBytes, round);
  }
  if (isLowBitFloat(to) || isPacked(to)) {
    if (x.dtype() == DType::String || x.dtype() == DType::Complex64 || x.dtype() == DType::Complex128) return Tensor();
    if (storageBytes(to, x.numel()) > maxOutputBytes)
      throw KernelOutputTooLarge("Cast: output exceeds the limit", storageBytes(to, x.numel()));
    // Float8 takes saturate; int4 / uint4 keep their low four bits as ONNX's Cast specifies.
    return narrowToLowBit(x, to, isPacked(to) && to != DType::Float4E2M1 ? false : saturate, round);
  }
  if (to == DType::String) return toStrings(x);
  if (x.dtype() == DType::String) return fromStrings(x, to, maxOutputBytes);
  const std::optional<int64_t> bytes = checkedMul(x.numel(), dtypeSize(to));
  if (!bytes || *bytes > maxOutputBytes)
    throw KernelOutputTooLarge(
        "Cast: output of " + (bytes ? std::to_string(*bytes) : std::string("overflowing")) + " bytes exceeds the limit",
        bytes.value_or(INT64_MAX));
  // Every element is written below.
  auto buffer = std::make_shared<HeapStorage>(static_cast<size_t>(*bytes), HeapStorage::Start::Unset);
  uint8_t* out = buffer->data();
  if (x.dtype() == DType::Float && to == DType::Float16) {  // weights narrowed to fp16: in bulk, on every core
    const auto* in = reinterpret_cast<const float*>(x.data());
    auto* halves = reinterpret_cast<uint16_t*>(out);
    parallelFor(static_cast<size_t>(x.numel()), size_t{1} << 17, 64,
                [&](size_t begin, size_t end) { floatsToHalves(in + begin, halves + begin, end - begin); });
    return Tensor(to, x.dims(), std::move(buffer));
  }
  bool supported = false;
  using namespace kernels;
  // The source pointer and count in locals: a store through uint8_t may alias anything, and x.data() is a virtual
  // call, so read inside the loop they were fetched again for every element.
  const uint8_t* const in = x.data();
  const int64_t n = x.numel();
  dispatch<kAll>(x.dtype(), [&](auto inTag) {
    using SIn = typename decltype(inTag)::type;
    supported = dispatch<kAll>(to, [&](auto outTag) {
      using SOut = typename decltype(outTag)::type;
      for (int64_t i = 0; i < n; ++i) kernels::store<SOut>(out, i, Elem<SIn>::load(in, i));
    });
  });
  if (!supported) return Tensor();
  return Tensor(to, x.dims(), std::move(buffer));
}

}  // namespace kiln

namespace kiln::kernels {
namespace {

// Cast-19's saturate (default 1) only matters for the float8 targets: 0 turns out-of-range values into NaN / inf.
// Cast-24's round_mode: how a value lands on float8e8m0's powers of two. CastLike takes both as Cast does.
std::vector<Tensor> castTo(const KernelContext& ctx, DType to) {
  const std::string mode = ctx.node().attrString("round_mode", "up");
  if (mode != "up" && mode != "down" && mode != "nearest") ctx.fail("round_mode '" + mode + "' is not up, down or nearest");
  const E8M0Round round = mode == "down" ? E8M0Round::Down : mode == "nearest" ? E8M0Round::Nearest : E8M0Round::Up;
  Tensor t = castTensor(ctx.required(0), to, ctx.node().attrInt("saturate", 1) != 0, ctx.limits().maxOutputBytes, round);
  if (!t.valid()) return {};
  return {t};
}

std::vector<Tensor> cast(const KernelContext& ctx) {
  const auto to = dtypeFromOnnx(static_cast<int>(ctx.node().attrInt("to", 0)));
  if (!to) ctx.fail("attribute 'to' is not a known element type");
  return castTo(ctx, *to);
}

// CastLike(x, like): the target type is like's element type.
std::vector<Tensor> castLike(const KernelContext& ctx) { return castTo(ctx, ctx.required(1).dtype()); }

// BitCast-26: the same bytes read as another type of the same width (little-endian, as this machine is).
std::vector<Tensor> bitCast(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  const auto to = dtypeFromOnnx(static_cast<int>(ctx.node().attrInt("to", 0)));
  if (!to || *to == DType::String || x.dtype() == DType::String) ctx.fail("BitCast needs non-string types");
  if (dtypeBits(*to) != dtypeBits(x.dtype())) ctx.fail("BitCast between types of different widths");
  return {Tensor::fromBytes(*to, x.dims(), std::string(reinterpret_cast<const char*>(x.data()), x.byteSize()))};
}

}  // namespace

void registerCastKernels(KernelRegistry& r) {
  r.addStringAware("Cast", cast);
  r.addStringAware("CastLike", castLike);
  r.add("BitCast", bitCast);
}

}  // namespace kiln::kernels
