// Depthwise 2-D convolution computed directly: MobileNet-style layers (group = channels, one input channel per
// group) would otherwise build an im2col matrix and call a GEMM per channel for a 9 × H·W product — the copy and the
// call cost far more than the 9 multiply-adds per output. Here each output row accumulates tap by tap over the span
// of output columns whose input column lies inside the image, so the inner loop has no bounds tests and (at stride
// 1) vectorises.
#include <algorithm>
#include <cstdint>

#include "kernels/nn_kernels.h"
#include "util/parallel_for.h"

namespace kiln::kernels::nn {

std::pair<int64_t, int64_t> insideColumns(int64_t offset, int64_t stride, int64_t width, int64_t outWidth) {
  int64_t lo = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  int64_t hi = width - 1 - offset < 0 ? 0 : (width - 1 - offset) / stride + 1;
  lo = std::min(lo, outWidth);
  hi = std::clamp(hi, lo, outWidth);
  return {lo, hi};
}

namespace {

template <typename W>
void depthwisePlane(const Window& win, const W* x, const W* w, W bias, W* y) {
  const int64_t inH = win.in[0], inW = win.in[1], kH = win.kernel[0], kW = win.kernel[1];
  const int64_t outH = win.out[0], outW = win.out[1], sH = win.stride[0], sW = win.stride[1];
  for (int64_t oh = 0; oh < outH; ++oh) {
    W* row = y + oh * outW;
    std::fill_n(row, outW, bias);
    for (int64_t kh = 0; kh < kH; ++kh) {
      const int64_t ih = oh * sH - win.padBegin[0] + kh * win.dilation[0];
      if (ih < 0 || ih >= inH) continue;
      const W* in = x + ih * inW;
      for (int64_t kw = 0; kw < kW; ++kw) {
        const W tap = w[kh * kW + kw];
        const int64_t offset = kw * win.dilation[1] - win.padBegin[1];
        const auto [lo, hi] = insideColumns(offset, sW, inW, outW);
        if (sW == 1) {
          const W* src = in + offset;
          for (int64_t o = lo; o < hi; ++o) row[o] += tap * src[o];
        } else {
          for (int64_t o = lo; o < hi; ++o) row[o] += tap * in[o * sW + offset];
        }
      }
    }
  }
}

template <typename W>
bool depthwise(const ConvShape& s, const W* x, const W* w, const W* bias, W* y) {
  const Window& win = s.window;
  if (win.rank() != 2 || s.inChannels != s.group || s.group == 1) return false;
  const int64_t mg = s.outChannels / s.group;  // the channel multiplier
  const int64_t inSize = win.in[0] * win.in[1], outSize = win.out[0] * win.out[1];
  const int64_t taps = win.kernel[0] * win.kernel[1];
  const size_t planes = static_cast<size_t>(s.batch * s.outChannels);
  // Pieces of at least ~256K multiply-adds: smaller layers run on the calling thread.
  const size_t perPiece = std::max<size_t>(1, (size_t{1} << 18) / static_cast<size_t>(std::max<int64_t>(1, outSize * taps)));
  parallelFor(planes, perPiece, 1, [&](size_t first, size_t last) {
    for (size_t p = first; p < last; ++p) {
      const int64_t n = static_cast<int64_t>(p) / s.outChannels, oc = static_cast<int64_t>(p) % s.outChannels;
      depthwisePlane(win, x + (n * s.inChannels + oc / mg) * inSize, w + oc * taps, bias ? bias[oc] : W(0),
                     y + static_cast<int64_t>(p) * outSize);
    }
  });
  return true;
}

}  // namespace

bool convolveDepthwise2d(const ConvShape& s, const float* x, const float* w, const float* bias, float* y) {
  return depthwise(s, x, w, bias, y);
}
bool convolveDepthwise2d(const ConvShape& s, const double* x, const double* w, const double* bias, double* y) {
  return depthwise(s, x, w, bias, y);
}

}  // namespace kiln::kernels::nn
