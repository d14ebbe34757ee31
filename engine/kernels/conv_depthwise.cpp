// Depthwise 2-D convolution computed directly: MobileNet-style layers (group = channels, one input channel per
// group) would otherwise build an im2col matrix and call a GEMM per channel for a 9 × H·W product — the copy and the
// call cost far more than the 9 multiply-adds per output. Each input plane is first copied into a zero-padded plane
// (one read and write per input element, against K² multiply-adds per output), so every output element has all its
// taps in memory and no border needs a bounds test; with the kernel's width and column stride fixed at compile time
// (3, 5, 7; 1, 2) each output element sums its taps in registers and the column loop vectorises. At column stride
// 2 the padded rows are stored even columns first, then odd ones, so every tap reads a contiguous run.
#include <algorithm>
#include <type_traits>
#include <cstdint>
#include <utility>
#include <vector>

#include "kernels/nn_kernels.h"
#include "util/parallel_for.h"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace kiln::kernels::nn {

std::pair<int64_t, int64_t> insideColumns(int64_t offset, int64_t stride, int64_t width, int64_t outWidth) {
  int64_t lo = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  int64_t hi = width - 1 - offset < 0 ? 0 : (width - 1 - offset) / stride + 1;
  lo = std::min(lo, outWidth);
  hi = std::clamp(hi, lo, outWidth);
  return {lo, hi};
}

PaddedPlane paddedPlane(const Window& win) {
  int64_t reach[2];
  for (size_t d = 0; d < 2; ++d)
    reach[d] = std::max(win.padBegin[d] + win.in[d] + win.padEnd[d],
                        (win.out[d] - 1) * win.stride[d] + (win.kernel[d] - 1) * win.dilation[d] + 1);
  PaddedPlane p;
  p.height = reach[0];
  p.width = reach[1];
  p.worthIt = p.height <= 4 * win.in[0] + 64 && p.width <= 4 * win.in[1] + 64 &&
              p.height * p.width <= 4 * win.in[0] * win.in[1] + 4096;
  return p;
}

namespace {

// One output element straight from the unpadded input, every tap checked: for windows whose padding is out of
// proportion to the image (a padded copy would be far larger than the input). Summed in the same order as the rows
// below: bias, then row by row, column by column.
template <typename W>
W borderOutput(const Window& win, const W* x, const W* w, W bias, int64_t oh, int64_t ow) {
  W acc = bias;
  for (int64_t kh = 0; kh < win.kernel[0]; ++kh) {
    const int64_t ih = oh * win.stride[0] - win.padBegin[0] + kh * win.dilation[0];
    if (ih < 0 || ih >= win.in[0]) continue;
    for (int64_t kw = 0; kw < win.kernel[1]; ++kw) {
      const int64_t iw = ow * win.stride[1] - win.padBegin[1] + kw * win.dilation[1];
      if (iw >= 0 && iw < win.in[1]) acc = multiplyAdd(w[kh * win.kernel[1] + kw], x[ih * win.in[1] + iw], acc);
    }
  }
  return acc;
}

// One output row from the kernel's rows of the padded plane (`rows`, one per kernel row). K (width and height) and
// S fixed, dilation 1: the taps unroll into registers and the column loop vectorises. Column o's tap kw reads
// rows[kh][o·S + kw]; with Split (S = 2, rows stored as even columns then odd ones from `odd` on: copyIntoPadded)
// the same element sits at rows[kh][o + kw/2] (kw even) or rows[kh][odd + o + kw/2] (kw odd).
template <typename W, int K, int S, bool Split>
void outputRowFixed(const Window&, const W* const* rows, int64_t odd, const W* w, W bias, int64_t outW,
                    W* __restrict out) {
  const W* r[K];
  W wk[K * K];
  for (int j = 0; j < K; ++j) r[j] = rows[j];
  for (int t = 0; t < K * K; ++t) wk[t] = w[t];
  for (int64_t o = 0; o < outW; ++o) {
    W acc = bias;
    // Unrolled before the vectoriser sees the column loop (GCC's early unrolling stops short of 3×3).
#pragma GCC unroll 8
    for (int j = 0; j < K; ++j)
#pragma GCC unroll 8
      for (int kw = 0; kw < K; ++kw)
        acc = multiplyAdd(wk[j * K + kw], Split ? r[j][(kw % 2 ? odd : 0) + o + kw / 2] : r[j][o * S + kw], acc);
    out[o] = acc;
  }
}

#if defined(__AVX512F__)
// The same sums 16 columns a vector, NV vectors side by side (independent chains: one vector's nine dependent
// multiply-adds alone would leave the core waiting on each), the row's tail masked (GCC leaves a loop's remainder
// scalar: most of a 14- or 28-wide row), so every row is computed in place and a plane needs no flat copy. Each tap
// is one fused multiply-add, as the contracted scalar loop above and the blocked kernel (conv_nc1hwc0.cpp) do: the
// same bits.
template <int K, bool Split, int NV>
void outputColumns(const float* const* rows, int64_t odd, const float* w, float bias, int64_t o, int64_t rest,
                   float* out) {
  __mmask16 m[NV];
  __m512 acc[NV];
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v) {
    const int64_t left = rest - 16 * v;
    m[v] = left >= 16 ? __mmask16(0xffff) : __mmask16((1u << left) - 1);
    acc[v] = _mm512_set1_ps(bias);
  }
#pragma GCC unroll 8
  for (int j = 0; j < K; ++j)
#pragma GCC unroll 8
    for (int kw = 0; kw < K; ++kw) {
      const float* in = (Split ? rows[j] + (kw % 2 ? odd : 0) + kw / 2 : rows[j] + kw) + o;
      const __m512 tap = _mm512_set1_ps(w[j * K + kw]);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[v] = _mm512_fmadd_ps(tap, _mm512_maskz_loadu_ps(m[v], in + 16 * v), acc[v]);
    }
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v) _mm512_mask_storeu_ps(out + o + 16 * v, m[v], acc[v]);
}

template <int K, bool Split>
void outputRowVector(const Window&, const float* const* rows, int64_t odd, const float* w, float bias, int64_t outW,
                     float* out) {
  for (int64_t o = 0; o < outW; o += 64) {
    const int64_t rest = outW - o;
    if (rest > 48)
      outputColumns<K, Split, 4>(rows, odd, w, bias, o, rest, out);
    else if (rest > 32)
      outputColumns<K, Split, 3>(rows, odd, w, bias, o, rest, out);
    else if (rest > 16)
      outputColumns<K, Split, 2>(rows, odd, w, bias, o, rest, out);
    else
      outputColumns<K, Split, 1>(rows, odd, w, bias, o, rest, out);
  }
}
#endif

template <typename W>
void outputRowAny(const Window& win, const W* const* rows, int64_t, const W* w, W bias, int64_t outW, W* out) {
  const int64_t kH = win.kernel[0], kW = win.kernel[1], sW = win.stride[1], dW = win.dilation[1];
  std::fill(out, out + outW, bias);
  for (int64_t kh = 0; kh < kH; ++kh) {
    const W* in = rows[kh];
    const W* wk = w + kh * kW;
    for (int64_t o = 0; o < outW; ++o) {
      W acc = out[o];
      for (int64_t kw = 0; kw < kW; ++kw) acc = multiplyAdd(wk[kw], in[o * sW + kw * dW], acc);
      out[o] = acc;
    }
  }
}

template <typename W>
using RowFn = void (*)(const Window&, const W* const*, int64_t, const W*, W, int64_t, W*);
template <typename W>
struct RowKernel {
  RowFn<W> fn;
  bool splitColumns = false;  // the padded plane's rows stored even columns, then odd ones
  // At stride 1 (and dilation 1) on both axes, the rows of outputs are the padded plane's rows: one call over the
  // plane as a single row computes them all (with pad.width - outW spare outputs per row, dropped), instead of a
  // short call per output row (MobileNetV2's 14- and 7-wide planes: mostly loop overhead). The same taps in the
  // same order. The vector rows, whose tails are masked, need it only for narrow planes.
  bool planeAsOneRow = false;
};

template <typename W, int K>
RowKernel<W> fixedRow(const Window& win) {
  const bool s1 = win.stride[1] == 1, oneRow = s1 && win.stride[0] == 1 && win.dilation[0] == 1;
#if defined(__AVX512F__)
  if constexpr (std::is_same_v<W, float>)
    return {s1 ? outputRowVector<K, false> : outputRowVector<K, true>, !s1, oneRow && win.out[1] < 32};
#endif
  if (s1) return {outputRowFixed<W, K, 1, false>, false, oneRow};
  return {outputRowFixed<W, K, 2, true>, true};
}

// The row loop for the common square kernels (MobileNets: 3×3, 5×5; 7×7) at column stride 1 or 2 without dilation,
// else the general one.
template <typename W>
RowKernel<W> rowFor(const Window& win) {
  const int64_t k = win.kernel[1], s = win.stride[1];
  if (win.kernel[0] != k || win.dilation[1] != 1 || (s != 1 && s != 2)) return {outputRowAny<W>};
  if (k == 3) return fixedRow<W, 3>(win);
  if (k == 5) return fixedRow<W, 5>(win);
  if (k == 7) return fixedRow<W, 7>(win);
  return {outputRowAny<W>};
}

template <typename W>
void depthwisePlane(const Window& win, const PaddedPlane& pad, const RowKernel<W>& kernel, const W* x, const W* w,
                    W bias, std::vector<W>& padded, std::vector<W>& flat, std::vector<const W*>& rows, W* y) {
  const int64_t kH = win.kernel[0], outH = win.out[0], outW = win.out[1];
  if (!pad.worthIt) {
    for (int64_t oh = 0; oh < outH; ++oh)
      for (int64_t ow = 0; ow < outW; ++ow) y[oh * outW + ow] = borderOutput(win, x, w, bias, oh, ow);
    return;
  }
  copyIntoPadded(win, pad, x, W(0), padded, kernel.splitColumns);
  const int64_t odd = (pad.width + 1) / 2;
  rows.resize(static_cast<size_t>(kH));
  if (kernel.planeAsOneRow) {
    padded.resize(padded.size() + static_cast<size_t>(win.kernel[1] - 1), W(0));  // the last spare outputs' taps
    for (int64_t kh = 0; kh < kH; ++kh) rows[static_cast<size_t>(kh)] = padded.data() + kh * pad.width;
    flat.resize(static_cast<size_t>(outH * pad.width));
    kernel.fn(win, rows.data(), odd, w, bias, outH * pad.width, flat.data());
    for (int64_t oh = 0; oh < outH; ++oh) std::copy_n(flat.data() + oh * pad.width, outW, y + oh * outW);
    return;
  }
  for (int64_t oh = 0; oh < outH; ++oh) {
    for (int64_t kh = 0; kh < kH; ++kh)
      rows[static_cast<size_t>(kh)] = padded.data() + (oh * win.stride[0] + kh * win.dilation[0]) * pad.width;
    kernel.fn(win, rows.data(), odd, w, bias, outW, y + oh * outW);
  }
}

template <typename W>
bool depthwise(const ConvShape& s, const W* x, const W* w, const W* bias, W* y, const ChannelSteps* steps) {
  const Window& win = s.window;
  if (win.rank() != 2 || s.inChannels != s.group || s.group == 1) return false;
  const int64_t mg = s.outChannels / s.group;  // the channel multiplier
  const int64_t inSize = win.in[0] * win.in[1], outSize = win.out[0] * win.out[1];
  const int64_t taps = win.kernel[0] * win.kernel[1];
  const size_t planes = static_cast<size_t>(s.batch * s.outChannels);
  // Pieces of at least ~256K multiply-adds: smaller layers run on the calling thread.
  const size_t perPiece = std::max<size_t>(1, (size_t{1} << 18) / static_cast<size_t>(std::max<int64_t>(1, outSize * taps)));
  const RowKernel<W> kernel = rowFor<W>(win);
  const PaddedPlane pad = paddedPlane(win);
  parallelFor(planes, perPiece, 1, [&](size_t first, size_t last) {
    std::vector<W> padded, flat;
    std::vector<const W*> rows;
    for (size_t p = first; p < last; ++p) {
      const int64_t n = static_cast<int64_t>(p) / s.outChannels, oc = static_cast<int64_t>(p) % s.outChannels;
      depthwisePlane(win, pad, kernel, x + (n * s.inChannels + oc / mg) * inSize, w + oc * taps,
                     bias ? bias[oc] : W(0), padded, flat, rows, y + static_cast<int64_t>(p) * outSize);
      if (steps) applyChannelSteps(*steps, oc, y + static_cast<int64_t>(p) * outSize, outSize);
    }
  });
  return true;
}

}  // namespace

void deinterleave(const float* in, int64_t n, float* a, float* b) {
  int64_t t = 0;
#if defined(__AVX512F__)
  // 32 elements a step: two loads, two two-source permutes, two stores.
  const __m512i evens = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odds = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  for (; 2 * t < n; t += 16) {  // the last step masked: a 28-wide row is one step
    const int64_t rest = n - 2 * t;
    const auto lanes = [](int64_t k) {
      return k >= 16 ? __mmask16(0xffff) : k <= 0 ? __mmask16(0) : __mmask16((1u << k) - 1);
    };
    const __m512 lo = _mm512_maskz_loadu_ps(lanes(rest), in + 2 * t);
    const __m512 hi = _mm512_maskz_loadu_ps(lanes(rest - 16), in + 2 * t + 16);
    _mm512_mask_storeu_ps(a + t, lanes((rest + 1) / 2), _mm512_permutex2var_ps(lo, evens, hi));
    _mm512_mask_storeu_ps(b + t, lanes(rest / 2), _mm512_permutex2var_ps(lo, odds, hi));
  }
#endif
  for (; 2 * t < n; ++t) {
    a[t] = in[2 * t];
    if (2 * t + 1 < n) b[t] = in[2 * t + 1];
  }
}
void deinterleave(const double* in, int64_t n, double* a, double* b) {
  for (int64_t t = 0; 2 * t < n; ++t) {
    a[t] = in[2 * t];
    if (2 * t + 1 < n) b[t] = in[2 * t + 1];
  }
}

bool convolveDepthwise2d(const ConvShape& s, const float* x, const float* w, const float* bias, float* y,
                         const ChannelSteps* steps) {
  return depthwise(s, x, w, bias, y, steps);
}
bool convolveDepthwise2d(const ConvShape& s, const double* x, const double* w, const double* bias, double* y,
                         const ChannelSteps* steps) {
  return depthwise(s, x, w, bias, y, steps);
}

}  // namespace kiln::kernels::nn
