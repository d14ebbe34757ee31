#include "ir/low_bit_types.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <vector>

namespace kiln {
namespace {

struct Format {
  int expBits, manBits, bias;
  bool hasInf;     // E5M2 only
  bool nanIsNegZero;  // the FNUZ formats: 0x80 is their one NaN, zero has no sign
  bool hasNan;     // float4 has none
};

Format formatOf(DType t) {
  switch (t) {
    case DType::Float8E4M3FN: return {4, 3, 7, false, false, true};
    case DType::Float8E4M3FNUZ: return {4, 3, 8, false, true, true};
    case DType::Float8E5M2: return {5, 2, 15, true, false, true};
    case DType::Float8E5M2FNUZ: return {5, 2, 16, false, true, true};
    case DType::Float4E2M1: return {2, 1, 1, false, false, false};
    default: throw std::logic_error("not a low-bit float type");
  }
}

float decode(const Format& f, uint8_t bits) {
  const int width = 1 + f.expBits + f.manBits;
  const bool negative = (bits >> (width - 1)) & 1u;
  const int exp = (bits >> f.manBits) & ((1 << f.expBits) - 1);
  const int man = bits & ((1 << f.manBits) - 1);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  if (f.nanIsNegZero && bits == 0x80) return nan;
  const int expMax = (1 << f.expBits) - 1;
  if (f.hasInf && exp == expMax) return man == 0 ? (negative ? -INFINITY : INFINITY) : nan;
  if (!f.hasInf && !f.nanIsNegZero && f.hasNan && exp == expMax && man == (1 << f.manBits) - 1) return nan;  // E4M3FN
  const float m = static_cast<float>(man) / static_cast<float>(1 << f.manBits);
  const float v = exp == 0 ? std::ldexp(m, 1 - f.bias) : std::ldexp(1.0f + m, exp - f.bias);
  return negative ? -v : v;
}

// The non-negative finite values of a format with their codes, ascending.
struct Table {
  std::vector<std::pair<float, uint8_t>> values;
  float max = 0;
};

const Table& tableOf(DType t) {
  static const std::array<Table, 5> tables = [] {
    std::array<Table, 5> all;
    const DType types[] = {DType::Float8E4M3FN, DType::Float8E4M3FNUZ, DType::Float8E5M2, DType::Float8E5M2FNUZ,
                           DType::Float4E2M1};
    for (size_t k = 0; k < 5; ++k) {
      const Format f = formatOf(types[k]);
      const int positives = 1 << (f.expBits + f.manBits);
      for (int code = 0; code < positives; ++code) {
        const float v = decode(f, static_cast<uint8_t>(code));
        if (std::isfinite(v)) all[k].values.emplace_back(v, static_cast<uint8_t>(code));
      }
      std::sort(all[k].values.begin(), all[k].values.end());
      all[k].max = all[k].values.back().first;
    }
    return all;
  }();
  switch (t) {
    case DType::Float8E4M3FN: return tables[0];
    case DType::Float8E4M3FNUZ: return tables[1];
    case DType::Float8E5M2: return tables[2];
    case DType::Float8E5M2FNUZ: return tables[3];
    default: return tables[4];
  }
}

}  // namespace

float lowBitFloatToFloat(DType t, uint8_t bits) {
  if (t == DType::Float8E8M0) return bits == 0xFF ? std::numeric_limits<float>::quiet_NaN() : std::ldexp(1.0f, bits - 127);
  return decode(formatOf(t), bits);
}

float lowBitFloatMax(DType t) { return t == DType::Float8E8M0 ? std::ldexp(1.0f, 127) : tableOf(t).max; }

namespace {

// float32 -> E8M0 as ONNX's reference does: the float's biased exponent, moved up when the mantissa is not zero
// (round_mode up), when it is at least half (nearest), or never (down). The sign is dropped; zero and the float
// subnormals land on 2^-127 or 2^-126. NaN is 0xFF; infinity and values past 2^127 saturate to 0xFE or become NaN.
uint8_t floatToE8M0(float v, bool saturate, E8M0Round round) {
  if (std::isnan(v)) return 0xFF;
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  const uint32_t exponent = (bits >> 23) & 0xFF, mantissa = bits & 0x7FFFFF;
  if (exponent == 0xFF) return saturate ? 0xFE : 0xFF;  // infinity
  uint32_t e = exponent;
  if ((round == E8M0Round::Up && mantissa != 0) || (round == E8M0Round::Nearest && mantissa >= 0x400000)) ++e;
  if (e >= 0xFF) return saturate ? 0xFE : 0xFF;
  return static_cast<uint8_t>(e);
}

}  // namespace

uint8_t floatToLowBitFloat(DType t, float v, bool saturate, E8M0Round round) {
  if (t == DType::Float8E8M0) return floatToE8M0(v, saturate, round);
  const Format f = formatOf(t);
  const int width = 1 + f.expBits + f.manBits;
  const uint8_t signBit = static_cast<uint8_t>(1u << (width - 1));
  const Table& table = tableOf(t);
  const uint8_t nanCode = f.nanIsNegZero ? 0x80 : 0x7F;  // E4M3FN: S.1111.111; E5M2: a quiet NaN
  const uint8_t maxCode = table.values.back().second;
  if (std::isnan(v)) return f.hasNan ? nanCode : maxCode;  // float4 has no NaN: ONNX saturates it to the maximum
  const bool negative = std::signbit(v);
  const float a = std::fabs(v);
  const uint8_t sign = negative ? signBit : 0;
  auto withSign = [&](uint8_t code) -> uint8_t {
    if (code == 0 && f.nanIsNegZero) return 0;  // no negative zero in the FNUZ formats
    return static_cast<uint8_t>(code | sign);
  };
  if (std::isinf(a) || a > table.max) {
    // Beyond the largest finite value: rounding may still land on it, else saturate / infinity / NaN.
    const float last = table.values.back().first, prev = table.values[table.values.size() - 2].first;
    const bool roundsToMax = std::isfinite(a) && a < last + (last - prev) / 2;
    if (saturate || roundsToMax || !f.hasNan) return withSign(maxCode);
    if (f.hasInf) return static_cast<uint8_t>((negative ? signBit : 0) | (((1 << f.expBits) - 1) << f.manBits));
    return nanCode;
  }
  auto it = std::lower_bound(table.values.begin(), table.values.end(), std::make_pair(a, uint8_t{0}));
  if (it == table.values.end()) return withSign(maxCode);
  if (it->first == a || it == table.values.begin()) return withSign(it->second);
  const auto below = std::prev(it);
  const float dHigh = it->first - a, dLow = a - below->first;
  if (dLow < dHigh) return withSign(below->second);
  if (dHigh < dLow) return withSign(it->second);
  return withSign((below->second & 1u) == 0 ? below->second : it->second);  // a tie: the even mantissa
}

Tensor widenLowBit(const Tensor& x) {
  const DType t = x.dtype();
  const int bits = dtypeBits(t);
  if (isLowBitFloat(t)) {
    std::vector<float> out(static_cast<size_t>(x.numel()));
    for (int64_t i = 0; i < x.numel(); ++i)
      out[static_cast<size_t>(i)] = lowBitFloatToFloat(t, isPacked(t) ? packedAt(x.data(), i, bits) : x.data()[i]);
    return Tensor::fromVector(DType::Float, x.dims(), out);
  }
  if (isPacked(t)) {
    std::vector<uint8_t> out(static_cast<size_t>(x.numel()));
    for (int64_t i = 0; i < x.numel(); ++i)
      out[static_cast<size_t>(i)] = static_cast<uint8_t>(packedIntValue(t, packedAt(x.data(), i, bits)));
    return Tensor::fromVector(t == DType::Int4 || t == DType::Int2 ? DType::Int8 : DType::UInt8, x.dims(), out);
  }
  return x;
}

Tensor narrowToLowBit(const Tensor& x, DType to, bool saturate, E8M0Round round) {
  const std::vector<double> v = x.toDouble();
  const int64_t n = static_cast<int64_t>(v.size());
  std::string bytes(static_cast<size_t>(storageBytes(to, n)), '\0');
  auto* out = reinterpret_cast<uint8_t*>(bytes.data());
  for (int64_t i = 0; i < n; ++i) {
    const double e = v[static_cast<size_t>(i)];
    uint8_t code;
    const int bits = dtypeBits(to);
    if (isLowBitFloat(to)) {
      code = floatToLowBitFloat(to, static_cast<float>(e), saturate, round);
    } else {
      // Integers into four or two bits: round half to even, then saturate or keep the low bits.
      const bool isSigned = to == DType::Int4 || to == DType::Int2;
      const double span = std::ldexp(1.0, bits);
      const double lo = isSigned ? -span / 2 : 0, hi = isSigned ? span / 2 - 1 : span - 1;
      double r = std::isfinite(e) ? std::nearbyint(e) : 0;
      if (saturate) r = std::clamp(r, lo, hi);
      else r = std::fmod(r, 65536.0);  // the low bits of a huge value: keep it in int range first
      code = static_cast<uint8_t>(static_cast<int64_t>(r) & ((1 << bits) - 1));
    }
    if (isPacked(to)) {
      const int perByte = 8 / bits;
      out[i / perByte] = static_cast<uint8_t>(out[i / perByte] | (code << ((i % perByte) * bits)));
    } else {
      out[i] = code;
    }
  }
  return Tensor::fromBytes(to, x.dims(), std::move(bytes));
}

}  // namespace kiln
