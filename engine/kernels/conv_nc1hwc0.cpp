// Convolutions of fp32 activations stored NC1HWC0 (C0 = 16: [N, C1, H, W, 16], channel c at block c / 16, lane
// c % 16, the last block's spare lanes zero), written straight into an NC1HWC0 output: the compiled mode's
// convolutions no longer convert their input to NCHW and their output back around each node (two passes over each
// activation, and two tensors allocated). The same idea as ONNX Runtime's NCHWc kernels.
//  - group 1: im2col reads the blocked input band by band, nn::gemm multiplies as for NCHW, and each band's product is
//    transposed into the output's blocks while it is in cache;
//  - depthwise (one input channel per group, multiplier 1): direct, 16 channels at a time, one lane each.
// Each output is the same sum, in the same order, as the NCHW kernels' (conv.cpp, conv_depthwise.cpp): the same bits.
#include "kernels/nn_kernels.h"

#include <climits>
#include <memory>
#include <optional>
#include <span>

#include "ir/shape.h"
#include "kernels/sgemm_tiles.h"
#include "kernels/transdata_blocked.h"
#include "util/parallel_for.h"

namespace kiln::kernels::nn {
namespace {

constexpr int64_t kC0 = 16;

int64_t blocksOf(int64_t channels) { return (channels + kC0 - 1) / kC0; }

int64_t mul(const KernelContext& ctx, int64_t a, int64_t b) {
  const std::optional<int64_t> r = checkedMul(a, b);
  if (!r) ctx.fail("convolution extents overflow");
  return *r;
}

// im2col of a band of output lines [line0, line1) from the blocked input of image n: row (c·kH + kh)·kW + kw holds,
// for each output position of the band, the input element that tap reads (zero in the padding). A tap's inputs for
// one output line are positions of the block `stride` apart: one transpose for its 16 channels.
// A pointwise convolution at stride 1 without padding: its band's positions are read as stored, one run for them all.
bool pointwiseAsStored(const Window& w) {
  return w.kernel[0] == 1 && w.kernel[1] == 1 && w.stride[0] == 1 && w.stride[1] == 1 && w.padBegin[0] == 0 &&
         w.padBegin[1] == 0 && w.in[1] == w.out[1] && w.in[0] == w.out[0];
}

void im2colBlocked(const Window& w, const float* x, int64_t channels, int64_t line0, int64_t line1, float* col) {
  const int64_t inH = w.in[0], inW = w.in[1], kH = w.kernel[0], kW = w.kernel[1], outW = w.out[1];
  const int64_t sH = w.stride[0], sW = w.stride[1], width = (line1 - line0) * outW;
  const int64_t laneStride = kH * kW * width;  // between the rows of channels c and c + 1 for the same tap
  const bool pointwise = pointwiseAsStored(w);
  for (int64_t k = 0; k < blocksOf(channels); ++k) {
    const float* block = x + k * inH * inW * kC0;
    const int64_t lanes = std::min(kC0, channels - k * kC0);
    if (pointwise) {
      blocksToRows(block + line0 * inW * kC0, width, lanes, col + k * kC0 * width, laneStride);
      continue;
    }
    for (int64_t kh = 0; kh < kH; ++kh)
      for (int64_t kw = 0; kw < kW; ++kw) {
        float* first = col + ((k * kC0 * kH + kh) * kW + kw) * width;  // lane 0's row
        const int64_t offset = kw * w.dilation[1] - w.padBegin[1];
        const auto [lo, hi] = insideColumns(offset, sW, inW, outW);
        for (int64_t oh = line0; oh < line1; ++oh) {
          const int64_t ih = oh * sH - w.padBegin[0] + kh * w.dilation[0], at = (oh - line0) * outW;
          const bool inside = ih >= 0 && ih < inH;
          for (int64_t l = 0; l < lanes; ++l) {
            float* dst = first + l * laneStride + at;
            std::fill_n(dst, inside ? lo : outW, 0.0f);
            if (inside) std::fill_n(dst + hi, outW - hi, 0.0f);
          }
          if (!inside || hi <= lo) continue;
          const float* src = block + (ih * inW + lo * sW + offset) * kC0;
          blocksToRows(src, hi - lo, lanes, first + at + lo, laneStride, sW * kC0);
        }
      }
  }
}

// part [M, width] (+ bias, added as each block is written) into the output blocks of image n at positions
// [pos0, pos0 + width); spare lanes zero.
void storeBlocked(float* part, const float* bias, int64_t channels, int64_t width, int64_t pos0, int64_t plane,
                  float* y) {
  for (int64_t k = 0; k < blocksOf(channels); ++k) {
    const int64_t lanes = std::min(kC0, channels - k * kC0);
    float add[kC0] = {};  // the block's biases (the spare lanes' 0 keeps them 0)
    if (bias) std::copy_n(bias + k * kC0, lanes, add);
    rowsToBlocks(part + k * kC0 * width, width, width, lanes, y + (k * plane + pos0) * kC0, bias ? add : nullptr);
  }
}

// Output lines per band, as conv.cpp cuts them (so each GEMM has the same shape there and here, and the same bits),
// and the scratch a band takes: its im2col rows and its product. Nullopt when the extents overflow.
struct Bands {
  int64_t lines = 1, colFloats = 0, partFloats = 0;
};
std::optional<Bands> bandsOf(int64_t rows, int64_t outChannels, int64_t outH, int64_t outW) {
  const std::optional<int64_t> line = checkedMul(rows, outW);
  const std::optional<int64_t> lineBytes = line ? checkedMul(*line, 4) : std::nullopt;
  if (!lineBytes) return std::nullopt;
  Bands b;
  b.lines = std::clamp<int64_t>(kColumnBandBytes / std::max<int64_t>(1, *lineBytes), 1, std::max<int64_t>(outH, 1));
  const std::optional<int64_t> col = checkedMul(*line, b.lines);
  const std::optional<int64_t> part = checkedMul(outChannels, b.lines * outW);
  if (!col || !part) return std::nullopt;
  b.colFloats = *col;
  b.partFloats = *part;
  return b;
}

// A tiled product is stored into the blocks a band of about this many floats at a time (half of L2), at least
// kStoreBandMin columns wide (eight GEMM panels).
constexpr int64_t kStoreBandFloats = int64_t(512) << 10 >> 2;
constexpr int64_t kStoreBandMin = 256;

void denseBlocked(const KernelContext& ctx, const ConvShape& s, const float* x, const float* w, const float* bias,
                  float* y, std::span<float> workspace) {
  const Window& win = s.window;
  const int64_t inPlane = win.in[0] * win.in[1], outPlane = win.out[0] * win.out[1];
  const int64_t rows = mul(ctx, s.inChannels, win.kernel[0] * win.kernel[1]);
  const int64_t outW = win.out[1], lines = win.out[0];
  const std::optional<Bands> bands = bandsOf(rows, s.outChannels, lines, outW);
  if (!bands) ctx.fail("convolution extents overflow");
  const int64_t band = bands->lines;
  checkScratch(ctx, mul(ctx, rows + s.outChannels, band * outW), sizeof(float));
  // Not zeroed: im2col writes every element of a band and the GEMM every element of `part`.
  const auto need = static_cast<size_t>(bands->colFloats + bands->partFloats);
  std::unique_ptr<float[]> own(workspace.size() >= need ? nullptr : new float[need]);
  float* col = own ? own.get() : workspace.data();
  float* part = col + bands->colFloats;
  for (int64_t n = 0; n < s.batch; ++n) {
    const float* xn = x + n * blocksOf(s.inChannels) * inPlane * kC0;
    float* yn = y + n * blocksOf(s.outChannels) * outPlane * kC0;
    for (int64_t line0 = 0; line0 < lines; line0 += band) {
      const int64_t line1 = std::min(lines, line0 + band), width = (line1 - line0) * outW;
      if (plainProductIsTiled(s.outChannels, width, rows)) {
        // A band of columns at a time into `part`, each transposed into the output's blocks while it is in L2 (a
        // whole plane's product went to memory and back). Same chains, so the same bits.
        const bool asStored = pointwiseAsStored(win);
        if (!asStored) im2colBlocked(win, xn, s.inChannels, line0, line1, col);
        const int64_t columns =
            std::max(kStoreBandMin, kStoreBandFloats / s.outChannels / kSliverWidth * kSliverWidth);
        for (int64_t c0 = 0; c0 < width; c0 += columns) {
          const int64_t cw = std::min(columns, width - c0), pos0 = line0 * outW + c0;
          if (asStored) {
            // The GEMM's slivers of B transposed straight from the blocks (channel p = block · 16 + lane, the order
            // im2col's rows have): no im2col copy of the band. p0 is a multiple of the 256-deep block, so a sliver
            // starts at lane 0 of a block.
            const auto source = [&](int64_t p0, int64_t depth, int64_t j0, int cols, float* sliver) {
              for (int64_t p = p0; p < p0 + depth; p += kC0 - p % kC0) {
                const int64_t block = p / kC0, lane0 = p % kC0, lanes = std::min(kC0 - lane0, p0 + depth - p);
                blocksToRows(xn + (block * inPlane + pos0 + j0) * kC0 + lane0, cols, lanes,
                             sliver + (p - p0) * kSliverWidth, kSliverWidth);
              }
            };
            tiledSgemm(s.outChannels, cw, rows, w, rows, source, part, cw);
          } else {
            tiledSgemm(s.outChannels, cw, rows, w, rows, col + c0, width, part, cw);
          }
          storeBlocked(part, bias, s.outChannels, cw, pos0, outPlane, yn);
        }
        continue;
      } else {
        im2colBlocked(win, xn, s.inChannels, line0, line1, col);
        gemm(false, false, s.outChannels, width, rows, 1.0f, w, col, 0.0f, part);
      }
      storeBlocked(part, bias, s.outChannels, width, line0 * outW, outPlane, yn);
    }
  }
}

// One block of 16 channels: out[oh][ow][l] = bias[l] + Σ taps w[l][tap] · x[ih][iw][l], over a zero-padded copy of
// the block's planes.
void depthwiseBlock(const Window& win, const PaddedPlane& pad, const float* x, const float* taps, const float* bias,
                    std::vector<float>& padded, float* y) {
  const int64_t kH = win.kernel[0], kW = win.kernel[1], outH = win.out[0], outW = win.out[1];
  const int64_t sH = win.stride[0], sW = win.stride[1], dH = win.dilation[0], dW = win.dilation[1];
  padded.assign(static_cast<size_t>(pad.height * pad.width * kC0), 0.0f);
  for (int64_t ih = 0; ih < win.in[0]; ++ih)
    std::copy_n(x + ih * win.in[1] * kC0, win.in[1] * kC0,
                padded.data() + ((win.padBegin[0] + ih) * pad.width + win.padBegin[1]) * kC0);
  // Four positions at a time, their 16 lanes each in a register through every tap; the bias first, then the taps
  // row by row, as the NCHW kernel sums them (conv_depthwise.cpp): the same bits.
  constexpr int64_t kRun = 4;
  for (int64_t oh = 0; oh < outH; ++oh) {
    const float* line = padded.data() + oh * sH * pad.width * kC0;
    float* out = y + oh * outW * kC0;
    int64_t ow = 0;
    for (; ow + kRun <= outW; ow += kRun) {
      float acc[kRun][kC0];
      for (int64_t r = 0; r < kRun; ++r) std::copy_n(bias, kC0, acc[r]);
      for (int64_t kh = 0; kh < kH; ++kh)
        for (int64_t kw = 0; kw < kW; ++kw) {
          const float* in = line + ((kh * dH) * pad.width + ow * sW + kw * dW) * kC0;
          const float* tap = taps + (kh * kW + kw) * kC0;
#pragma GCC unroll 4
          for (int64_t r = 0; r < kRun; ++r)
            for (int64_t l = 0; l < kC0; ++l) acc[r][l] = multiplyAdd(tap[l], in[r * sW * kC0 + l], acc[r][l]);
        }
      std::copy_n(&acc[0][0], kRun * kC0, out + ow * kC0);
    }
    for (; ow < outW; ++ow) {
      float acc[kC0];
      std::copy_n(bias, kC0, acc);
      for (int64_t kh = 0; kh < kH; ++kh)
        for (int64_t kw = 0; kw < kW; ++kw) {
          const float* in = line + ((kh * dH) * pad.width + ow * sW + kw * dW) * kC0;
          const float* tap = taps + (kh * kW + kw) * kC0;
          for (int64_t l = 0; l < kC0; ++l) acc[l] = multiplyAdd(tap[l], in[l], acc[l]);
        }
      std::copy_n(acc, kC0, out + ow * kC0);
    }
  }
}

bool depthwiseBlocked(const ConvShape& s, const float* x, const float* w, const float* bias, float* y) {
  const Window& win = s.window;
  const PaddedPlane pad = paddedPlane(win);
  if (!pad.worthIt) return false;
  const int64_t c1 = blocksOf(s.outChannels), taps = win.kernel[0] * win.kernel[1];
  const int64_t inPlane = win.in[0] * win.in[1], outPlane = win.out[0] * win.out[1];
  // Per block: its taps as [tap][lane] and its bias, spare lanes zero (so spare output lanes come out zero).
  std::vector<float> blockTaps(static_cast<size_t>(c1 * taps * kC0), 0.0f), blockBias(static_cast<size_t>(c1 * kC0), 0.0f);
  for (int64_t c = 0; c < s.outChannels; ++c) {
    for (int64_t t = 0; t < taps; ++t) blockTaps[static_cast<size_t>(((c / kC0) * taps + t) * kC0 + c % kC0)] = w[c * taps + t];
    if (bias) blockBias[static_cast<size_t>(c)] = bias[c];
  }
  const size_t blocks = static_cast<size_t>(s.batch * c1);
  const size_t perPiece = std::max<size_t>(1, (size_t{1} << 14) / static_cast<size_t>(std::max<int64_t>(1, outPlane * taps)));
  parallelFor(blocks, perPiece, 1, [&](size_t first, size_t last) {
    std::vector<float> padded;
    for (size_t b = first; b < last; ++b) {
      const int64_t k = static_cast<int64_t>(b) % c1;
      depthwiseBlock(win, pad, x + static_cast<int64_t>(b) * inPlane * kC0, blockTaps.data() + k * taps * kC0,
                     blockBias.data() + k * kC0, padded, y + static_cast<int64_t>(b) * outPlane * kC0);
    }
  });
  return true;
}

}  // namespace

bool convolveNc1hwc0(const KernelContext& ctx, const ConvShape& s, const float* x, const float* w, const float* bias,
                     float* y, std::span<float> workspace) {
  if (s.window.rank() != 2) return false;
  if (s.group == 1) {
    if (convolveNc1hwc0Direct(s, x, w, bias, y)) return true;
    denseBlocked(ctx, s, x, w, bias, y, workspace);
    return true;
  }
  if (s.group == s.inChannels && s.outChannels == s.inChannels) return depthwiseBlocked(s, x, w, bias, y);
  return false;
}

int64_t blockedConvWorkspace(int64_t inChannels, int64_t taps, int64_t outChannels, int64_t outH, int64_t outW) {
  const std::optional<int64_t> rows = checkedMul(inChannels, taps);
  const std::optional<Bands> b = rows ? bandsOf(*rows, outChannels, outH, outW) : std::nullopt;
  return b && b->colFloats <= INT64_MAX - b->partFloats ? b->colFloats + b->partFloats : 0;
}

}  // namespace kiln::kernels::nn
