#include "kernels/vector_math.h"

#include <cstdint>
#include <bit>

namespace kiln::kernels {

namespace {

// e^x for a float x, in float throughout (16 lanes to an AVX-512 vector, twice double's 8): x = n·ln2 + r with n an
// integer and |r| ≤ ln2/2, r taken in two steps (ln2's high part has 16 significant bits, so n·kLn2Hi is exact for
// every n here), e^r = 1 + (r + r²·q(r)) with q Taylor's terms to r^7 (truncation < 0.1 ulp; adding the small part
// to 1 last keeps the rounding errors below an ulp), and 2^n applied in two halves so each is a normal float at both
// ends (n runs from -159 to 144). Checked against glibc's expf on every float: at most one ulp apart. Overflow and
// underflow come from the last multiplication; x is clamped to [-110, 100] only to bound n; NaN is chosen at the end.
[[gnu::always_inline]] inline float expOne(float xf) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693145751953125f;
  constexpr float kLn2Lo = 1.42860682030941723212e-6f;  // ln2 - kLn2Hi
  constexpr float kRound = 12582912.0f;                 // 1.5 · 2^23: adding it rounds to an integer, kept in the low bits
  const float x = xf > -110.0f ? (xf < 100.0f ? xf : 100.0f) : -110.0f;  // NaN: -110
  const float t = x * kLog2e + kRound;
  const float n = t - kRound;
  const float r = (x - n * kLn2Hi) - n * kLn2Lo;
  float q = 1.0f / 5040.0f;
  q = q * r + 1.0f / 720.0f;
  q = q * r + 1.0f / 120.0f;
  q = q * r + 1.0f / 24.0f;
  q = q * r + 1.0f / 6.0f;
  q = q * r + 0.5f;
  const float p = 1.0f + (r + (r * r) * q);
  // n from t's bits (its low bits hold n above kRound's), then 2^n1 · 2^n2 with n1 + n2 = n, each a biased exponent
  // put straight into a float's exponent field. No float-to-integer conversion, which the vectoriser would refuse.
  const auto ni = static_cast<int32_t>(std::bit_cast<uint32_t>(t) - std::bit_cast<uint32_t>(kRound));
  const int32_t n1 = ni / 2, n2 = ni - n1;
  const float s1 = std::bit_cast<float>(static_cast<uint32_t>(n1 + 127) << 23);
  const float s2 = std::bit_cast<float>(static_cast<uint32_t>(n2 + 127) << 23);
  const float y = (p * s1) * s2;
  return xf != xf ? xf : y;
}

}  // namespace

void expFloats(const float* in, float* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = expOne(in[i]);
}

}  // namespace kiln::kernels
