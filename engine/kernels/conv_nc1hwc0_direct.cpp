// Group-1 2-D convolutions of fp32 NC1HWC0 activations computed directly on the blocks, ONNX Runtime's NCHWc idea:
// a tile is 12 output positions of one row by 16 or 32 output channels (one or two output blocks), and each step
// multiplies the 12 positions' input value at (channel, tap) — one broadcast each, read where the padded blocked
// input holds it — by the weights of that (channel, tap) for the tile's output channels (one vector per block). The
// accumulators are output blocks as stored: no im2col of the input and no transpose of the product into the blocks
// (the way through the GEMM, conv_nc1hwc0.cpp, transposes every input element once per tap and every output
// element once: most of a compiled run of convolutions with few channels over large planes).
//
// Each output is the chain of fused multiply-adds over p = (channel, kh, kw) in im2col's row order from zero, then
// the bias added: what the tiled GEMM computes for the NCHW kernels (kernels/sgemm_tiles.h), so the same bits.
// The weights are re-laid out per call (16 output channels a block, [tap][16]: one vectorised transpose per block),
// worth it where the output has more positions than channels (planeWorthDirect).
#include "kernels/nn_kernels.h"

#include <algorithm>
#include <memory>

#include "kernels/transdata_blocked.h"
#include "util/parallel_for.h"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace kiln::kernels::nn {

#if defined(__AVX512F__)
namespace {

constexpr int64_t kC0 = 16;
constexpr int kPositions = 12;  // 12 × 2 accumulators of 16 lanes: 24 of the 32 registers

struct Direct {
  const float* x;        // input of one image: [C1][Hp][Wp][16], zeros in the padding
  int64_t plane, wp;     // floats between its blocks; its row length (with room for a last tile's positions
                         // beyond the row, or a pointwise convolution's plane cut into rows of wp positions)
  const float* weights;  // [M1][K][16], zero beyond M
  const int64_t* taps;   // per tap (kh, kw): its offset in the padded plane, in floats
  int64_t channels, nTaps, k, outW, stride;
};

// Positions [ow0, ow0 + real) of output row oh, output blocks [m1, m1 + NV), into y ([M1][outH·outW][16]). S: the
// column stride (a compile-time step between the positions' inputs). Clamp: the positions beyond `real` read the
// last real one's inputs (a plane read in place has no room after its last position).
template <int NV, int S, bool Clamp = false>
void tile(const Direct& d, int64_t oh, int64_t ow0, int real, int64_t m1, int64_t outPlane, const float* bias,
          int64_t outChannels, float* y) {
  __m512 acc[kPositions][NV];
#pragma GCC unroll 16
  for (int r = 0; r < kPositions; ++r)
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_setzero_ps();
  const float* row = d.x + (oh * d.stride * d.wp + ow0 * S) * kC0;
  const float* w = d.weights + m1 * d.k * kC0;
  int64_t p = 0;
  for (int64_t c = 0; c < d.channels; ++c) {
    const float* plane = row + (c / kC0) * d.plane + c % kC0;
    for (int64_t t = 0; t < d.nTaps; ++t, ++p) {
      const float* in = plane + d.taps[t];
      __m512 wv[NV];
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) wv[v] = _mm512_loadu_ps(w + (v * d.k + p) * kC0);
#pragma GCC unroll 16
      for (int r = 0; r < kPositions; ++r) {
        const __m512 xv = _mm512_set1_ps(in[(Clamp ? std::min(r, real - 1) : r) * S * kC0]);
#pragma GCC unroll 2
        for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_fmadd_ps(xv, wv[v], acc[r][v]);
      }
    }
  }
  const int64_t pos0 = oh * d.outW + ow0;
#pragma GCC unroll 2
  for (int v = 0; v < NV; ++v) {
    const int64_t lanes = std::min<int64_t>(kC0, outChannels - (m1 + v) * kC0);
    const __mmask16 real16 = lanes >= kC0 ? __mmask16(0xffff) : __mmask16((1u << lanes) - 1);
    const __m512 b = bias ? _mm512_maskz_loadu_ps(real16, bias + (m1 + v) * kC0) : _mm512_setzero_ps();
    float* out = y + ((m1 + v) * outPlane + pos0) * kC0;
#pragma GCC unroll 16
    for (int r = 0; r < kPositions; ++r) {
      if (r >= real) break;
      // Spare lanes stored as zeros (their weights are zero, but an infinite input would make them NaN).
      const __m512 sum = bias ? _mm512_add_ps(acc[r][v], b) : acc[r][v];
      _mm512_storeu_ps(out + r * kC0, _mm512_maskz_mov_ps(real16, sum));
    }
  }
}

// Row oh's `length` positions (d.outW but in the last row of a plane cut into rows).
template <int S>
void rowOfTiles(const Direct& d, int64_t oh, int64_t length, bool inPlace, int64_t m1, int64_t blocks,
                int64_t outPlane, const float* bias, int64_t outChannels, float* y) {
  for (int64_t ow0 = 0; ow0 < length; ow0 += kPositions) {
    const int real = static_cast<int>(std::min<int64_t>(kPositions, length - ow0));
    const bool two = blocks - m1 >= 2;
    if (inPlace && real < kPositions)
      two ? tile<2, S, true>(d, oh, ow0, real, m1, outPlane, bias, outChannels, y)
          : tile<1, S, true>(d, oh, ow0, real, m1, outPlane, bias, outChannels, y);
    else
      two ? tile<2, S>(d, oh, ow0, real, m1, outPlane, bias, outChannels, y)
          : tile<1, S>(d, oh, ow0, real, m1, outPlane, bias, outChannels, y);
  }
}

bool pointwiseInPlace(const Window& w) {
  return w.kernel[0] == 1 && w.kernel[1] == 1 && w.stride[0] == 1 && w.stride[1] == 1 && w.padBegin[0] == 0 &&
         w.padBegin[1] == 0 && w.in[0] == w.out[0] && w.in[1] == w.out[1];
}

}  // namespace

bool planeWorthDirect(const ConvShape& s) {
  const Window& w = s.window;
  if (w.rank() != 2 || s.group != 1 || (w.stride[1] != 1 && w.stride[1] != 2)) return false;
  // Per call the weights (M × K) are transposed once where the GEMM's way transposes the input per tap (K × N) and
  // the product (M × N): the direct way moves less once the plane has more positions than there are channels.
  // And only where the NCHW kernel's product is the tiled GEMM's chain of fused multiply-adds: a small product
  // goes through a plain loop whose multiply and add the compiler may or may not fuse (it does not at -O1).
  const int64_t positions = w.out[0] * w.out[1];
  return positions >= s.outChannels &&
         plainProductIsTiled(s.outChannels, positions, s.inChannels * w.kernel[0] * w.kernel[1]);
}

bool convolveNc1hwc0Direct(const ConvShape& s, const float* x, const float* w, const float* bias, float* y) {
  if (!planeWorthDirect(s) || s.inChannels < 1 || s.outChannels < 1) return false;
  const Window& win = s.window;
  const int64_t kH = win.kernel[0], kW = win.kernel[1], nTaps = kH * kW, k = s.inChannels * nTaps;
  const int64_t inH = win.in[0], inW = win.in[1], outH = win.out[0], outW = win.out[1], sW = win.stride[1];
  const int64_t c1 = (s.inChannels + kC0 - 1) / kC0, m1 = (s.outChannels + kC0 - 1) / kC0;
  // The padded plane reaches as far as the last tile's last position's last tap (positions beyond the row are
  // computed and dropped), and as far down as the last row's taps.
  const int64_t hp = std::max(win.padBegin[0] + inH, (outH - 1) * win.stride[0] + (kH - 1) * win.dilation[0] + 1);
  const int64_t lastTile = (outW + kPositions - 1) / kPositions * kPositions;
  const int64_t wp = std::max(win.padBegin[1] + inW, (lastTile - 1) * sW + (kW - 1) * win.dilation[1] + 1);
  // Padding out of proportion to the image (the padded copy far larger than the input): the GEMM's way instead.
  if (hp * wp > 4 * inH * inW + 4096) return false;
  // Weights as [M1][K][16] (16 output channels of tap p side by side), spare lanes zero.
  const auto weights = std::make_unique_for_overwrite<float[]>(static_cast<size_t>(m1 * k * kC0));
  for (int64_t b = 0; b < m1; ++b)
    rowsToBlocks(w + b * kC0 * k, k, k, std::min(kC0, s.outChannels - b * kC0), weights.get() + b * k * kC0);
  std::vector<int64_t> taps(static_cast<size_t>(nTaps));
  for (int64_t kh = 0; kh < kH; ++kh)
    for (int64_t kw = 0; kw < kW; ++kw)
      taps[static_cast<size_t>(kh * kW + kw)] = (kh * win.dilation[0] * wp + kw * win.dilation[1]) * kC0;
  const int64_t inPlane = inH * inW, outPlane = outH * outW, groups = (m1 + 1) / 2;
  // A pointwise convolution reads its input in place, its plane cut into rows of kFlatRow positions (pieces for
  // the threads); others read a padded copy.
  constexpr int64_t kFlatRow = 20 * kPositions;
  const bool inPlace = pointwiseInPlace(win);
  const int64_t rowLength = inPlace ? kFlatRow : outW, rows = inPlace ? (outPlane + kFlatRow - 1) / kFlatRow : outH;
  const auto padded = std::make_unique_for_overwrite<float[]>(inPlace ? 0 : static_cast<size_t>(c1 * hp * wp * kC0));
  for (int64_t n = 0; n < s.batch; ++n) {
    const float* xn = x + n * c1 * inPlane * kC0;
    if (!inPlace)  // zeros written only around the image (each row's margins, the rows above and below)
      for (int64_t b = 0; b < c1; ++b) {
        float* block = padded.get() + b * hp * wp * kC0;
        const int64_t top = win.padBegin[0], left = win.padBegin[1];
        std::fill_n(block, top * wp * kC0, 0.0f);
        std::fill(block + (top + inH) * wp * kC0, block + hp * wp * kC0, 0.0f);
        for (int64_t ih = 0; ih < inH; ++ih) {
          float* line = block + (top + ih) * wp * kC0;
          std::fill_n(line, left * kC0, 0.0f);
          std::copy_n(xn + (b * inPlane + ih * inW) * kC0, inW * kC0, line + left * kC0);
          std::fill(line + (left + inW) * kC0, line + wp * kC0, 0.0f);
        }
      }
    const Direct d{inPlace ? xn : padded.get(), inPlace ? inPlane * kC0 : hp * wp * kC0, inPlace ? kFlatRow : wp,
                   weights.get(), taps.data(), s.inChannels, nTaps, k, rowLength, inPlace ? 1 : win.stride[0]};
    float* yn = y + n * m1 * outPlane * kC0;
    // Pieces of output rows × channel groups worth at least ~1 MFLOP each.
    const auto rowFlops = static_cast<size_t>(2 * rowLength * 32 * k);
    parallelFor(static_cast<size_t>(rows * groups), std::max<size_t>(1, (size_t{1} << 20) / std::max<size_t>(1, rowFlops)),
                1, [&](size_t first, size_t last) {
                  for (size_t i = first; i < last; ++i) {
                    const int64_t oh = static_cast<int64_t>(i) / groups, g = static_cast<int64_t>(i) % groups;
                    const int64_t length = inPlace ? std::min(kFlatRow, outPlane - oh * kFlatRow) : outW;
                    if (sW == 1)
                      rowOfTiles<1>(d, oh, length, inPlace, 2 * g, m1, outPlane, bias, s.outChannels, yn);
                    else
                      rowOfTiles<2>(d, oh, length, inPlace, 2 * g, m1, outPlane, bias, s.outChannels, yn);
                  }
                });
  }
  return true;
}

#else

bool planeWorthDirect(const ConvShape&) { return false; }
bool convolveNc1hwc0Direct(const ConvShape&, const float*, const float*, const float*, float*) { return false; }

#endif

}  // namespace kiln::kernels::nn
