#include "kernels/vector_math.h"

#include <cstdint>
#include <bit>

namespace kiln::kernels {

namespace {

// e^x for a float x, in double: x = n·ln2 + r with n an integer and |r| ≤ ln2/2, then e^r by its Taylor series to
// r^11 (|r|^12/12! < 2e-14 relative) and 2^n put straight into the exponent. Branch-free so the loop vectorises.
// Overflow and underflow come from the one rounding to float (e^100 is beyond float's range, e^-110 below its
// smallest subnormal), so x is clamped to [-110, 100] only to keep 2^n a normal double; NaN is chosen at the end.
[[gnu::always_inline]] inline float expOne(float xf) {
  constexpr double kLog2e = 1.4426950408889634, kLn2 = 0.6931471805599453;
  constexpr double kRound = 6755399441055744.0;  // 1.5 · 2^52: adding it rounds to an integer, kept in the low bits
  const double x = xf > -110.0f ? (xf < 100.0f ? static_cast<double>(xf) : 100.0) : -110.0;  // NaN: -110
  const double t = x * kLog2e + kRound;
  const double n = t - kRound;
  const double r = x - n * kLn2;
  double p = 1.0 / 39916800.0;
  p = p * r + 1.0 / 3628800.0;
  p = p * r + 1.0 / 362880.0;
  p = p * r + 1.0 / 40320.0;
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  // 2^n: t's low bits hold n (two's complement), so (bits(t) + 1023) << 52 is n's biased exponent alone (kRound's
  // own bits shift out). No conversion to an integer type, which the vectoriser would refuse.
  const double scale = std::bit_cast<double>((std::bit_cast<uint64_t>(t) + 1023) << 52);
  const float y = static_cast<float>(p * scale);
  return xf != xf ? xf : y;
}

}  // namespace

void expFloats(const float* in, float* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = expOne(in[i]);
}

}  // namespace kiln::kernels
