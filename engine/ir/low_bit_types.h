#pragma once
// The element types narrower than a byte's worth of arithmetic that ONNX added in opsets 19 to 23: the four float8
// formats (E4M3FN: bias 7, no infinity, NaN S.1111.111, max 448; E4M3FNUZ: bias 8, NaN 0x80, no -0, max 240;
// E5M2: bias 15, IEEE-like with infinities, max 57344; E5M2FNUZ: bias 16, NaN 0x80, max 57344), float4 E2M1 (bias 1,
// values 0, 0.5, 1, 1.5, 2, 3, 4, 6, no infinity or NaN), int4 / uint4 packed two per byte (element 0 in the low
// nibble), int2 / uint2 packed four per byte (element 0 in the lowest bits), and float8e8m0 (opset 24: an unsigned
// power of two 2^(e - 127), 0xFF NaN, no zero). Decoding is exact; encoding rounds to nearest, ties to even, and
// out-of-range values saturate to the largest finite value (Cast's saturate = 1) or become NaN / infinity where the
// format has one (saturate = 0). E8M0 rounds as Cast-24's round_mode says (up by default).
#include <cstdint>

#include "ir/dtype.h"
#include "ir/tensor.h"

namespace kiln {

// One float8 / float4 bit pattern as a float; `t` must be isLowBitFloat.
float lowBitFloatToFloat(DType t, uint8_t bits);
enum class E8M0Round { Up, Down, Nearest };
uint8_t floatToLowBitFloat(DType t, float v, bool saturate, E8M0Round round = E8M0Round::Up);
// The largest finite value of a low-bit float type.
float lowBitFloatMax(DType t);

// Element i of a packed buffer of `bits`-bit elements (4 or 2), as its bit pattern.
inline uint8_t packedAt(const uint8_t* data, int64_t i, int bits) {
  const int perByte = 8 / bits;
  const uint8_t byte = data[i / perByte];
  return static_cast<uint8_t>((byte >> ((i % perByte) * bits)) & ((1u << bits) - 1));
}
// The integer a packed int4 / uint4 / int2 / uint2 pattern holds (two's complement for the signed ones).
inline int64_t packedIntValue(DType t, uint8_t code) {
  if (t == DType::Int4) return (code & 0x8) ? int64_t{code} - 16 : int64_t{code};
  if (t == DType::Int2) return (code & 0x2) ? int64_t{code} - 4 : int64_t{code};
  return code;
}

// A tensor of a low-bit type widened to one arithmetic can read: float8/float4 -> fp32, int4/uint4 -> int8/uint8.
// Other types come back unchanged.
Tensor widenLowBit(const Tensor& x);
// A tensor of fp32 / an integer type narrowed into a low-bit type. Values are read through Tensor::toDouble; into
// int4/uint4 they round half to even, then either saturate to the range (QuantizeLinear, saturate true) or keep
// their low four bits (Cast, as ONNX specifies: ONNX Runtime 1.30 wraps too, though it rounds ties away from zero).
Tensor narrowToLowBit(const Tensor& x, DType to, bool saturate, E8M0Round round = E8M0Round::Up);

}  // namespace kiln
