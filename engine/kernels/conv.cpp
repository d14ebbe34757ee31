// Conv and ConvTranspose (1-D/2-D/3-D and beyond, group, dilations, strides, pads, auto_pad) as im2col / col2im
// around one GEMM per image and group (nn::gemm: the tiled kernel or OpenBLAS; a large fp32 convolution gathers its
// im2col columns straight into the tiled kernel's slivers instead). Also the sliding-window geometry the pools share
// (nn_kernels.h).
#include <algorithm>
#include <memory>
#include <optional>

#include "kernels/nn_kernels.h"
#include "kernels/sgemm_tiles.h"
#include "kernels/transdata_blocked.h"
#include "ir/graph.h"
#include "ir/shape.h"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace kiln::kernels {
namespace nn {
namespace {

int64_t add(const KernelContext& ctx, int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) ctx.fail("window arithmetic overflows");
  return r;
}
int64_t mul(const KernelContext& ctx, int64_t a, int64_t b) {
  const std::optional<int64_t> r = checkedMul(a, b);
  if (!r) ctx.fail("window arithmetic overflows");
  return *r;
}
int64_t floorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0)) ? 1 : 0); }
int64_t ceilDiv(int64_t a, int64_t b) { return -floorDiv(-a, b); }

// An ints attribute of `count` values each >= minValue, or `count` copies of `fallback` when absent.
std::vector<int64_t> perAxis(const KernelContext& ctx, const char* name, size_t count, int64_t fallback,
                             int64_t minValue) {
  if (!hasAttr(ctx.node(), name)) return std::vector<int64_t>(count, fallback);
  std::vector<int64_t> v = ctx.node().attrInts(name);
  if (v.size() != count)
    ctx.fail(std::string(name) + " has " + std::to_string(v.size()) + " values for " + std::to_string(count));
  for (int64_t e : v)
    if (e < minValue) ctx.fail(std::string(name) + " value " + std::to_string(e) + " is out of range");
  return v;
}

// The extent one window covers: (k - 1) · dilation + 1.
int64_t effectiveKernel(const KernelContext& ctx, int64_t k, int64_t d) { return add(ctx, mul(ctx, k - 1, d), 1); }

void checkKernelShape(const KernelContext& ctx, const std::vector<int64_t>& kernel) {
  if (hasAttr(ctx.node(), "kernel_shape") && ctx.node().attrInts("kernel_shape") != kernel)
    ctx.fail("kernel_shape does not match the weights");
}

}  // namespace

Window slidingWindow(const KernelContext& ctx, const std::vector<int64_t>& in, const std::vector<int64_t>& kernel,
                     bool ceilMode) {
  Window w;
  const size_t r = in.size();
  w.in = in;
  w.kernel = kernel;
  for (int64_t k : kernel)
    if (k < 1) ctx.fail("kernel extent " + std::to_string(k) + " is not positive");
  w.stride = perAxis(ctx, "strides", r, 1, 1);
  w.dilation = perAxis(ctx, "dilations", r, 1, 1);
  const std::vector<int64_t> pads = perAxis(ctx, "pads", 2 * r, 0, 0);
  w.padBegin.assign(pads.begin(), pads.begin() + static_cast<ptrdiff_t>(r));
  w.padEnd.assign(pads.begin() + static_cast<ptrdiff_t>(r), pads.end());
  const std::string autoPad = ctx.node().attrString("auto_pad", "NOTSET");
  const bool same = autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER";
  if (!same && autoPad != "VALID" && autoPad != "NOTSET") ctx.fail("unknown auto_pad '" + autoPad + "'");
  for (size_t i = 0; i < r; ++i) {
    const int64_t ek = effectiveKernel(ctx, kernel[i], w.dilation[i]);
    const int64_t s = w.stride[i];
    if (same) {
      // Output ceil(in / stride); the padding that takes goes mostly after (UPPER) or before (LOWER).
      const int64_t out = ceilDiv(in[i], s);
      const int64_t total =
          std::max<int64_t>(0, add(ctx, add(ctx, mul(ctx, std::max<int64_t>(out - 1, 0), s), ek), -in[i]));
      w.padBegin[i] = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.padEnd[i] = total - w.padBegin[i];
      w.out.push_back(out);
      continue;
    }
    if (autoPad == "VALID") w.padBegin[i] = w.padEnd[i] = 0;
    const int64_t span = add(ctx, add(ctx, add(ctx, in[i], w.padBegin[i]), w.padEnd[i]), -ek);
    if (span < 0) ctx.fail("kernel is larger than the padded input on spatial axis " + std::to_string(i));
    int64_t out = (ceilMode ? ceilDiv(span, s) : span / s) + 1;
    // A ceil-mode window must still start inside the input or its begin padding.
    if (ceilMode && mul(ctx, out - 1, s) >= in[i] + w.padBegin[i]) --out;
    w.out.push_back(out);
  }
  return w;
}

ConvShape convShape(const KernelContext& ctx, const std::vector<int64_t>& x, const std::vector<int64_t>& w,
                    const Tensor* bias) {
  if (x.size() < 3) ctx.fail("X must have rank 3 or more ([N, C, spatial...])");
  if (w.size() != x.size()) ctx.fail("W's rank differs from X's");
  ConvShape s;
  s.batch = x[0];
  s.inChannels = x[1];
  s.outChannels = w[0];
  s.group = ctx.node().attrInt("group", 1);
  if (s.group < 1) ctx.fail("group must be positive");
  if (s.inChannels % s.group != 0 || s.outChannels % s.group != 0)
    ctx.fail("channels do not divide into " + std::to_string(s.group) + " groups");
  if (w[1] != s.inChannels / s.group) ctx.fail("W's input channels do not match X's channels per group");
  const std::vector<int64_t> kernel(w.begin() + 2, w.end());
  checkKernelShape(ctx, kernel);
  if (bias && (bias->dims().size() != 1 || bias->dims()[0] != s.outChannels))
    ctx.fail("B must be a vector of the output channel count");
  s.window = slidingWindow(ctx, std::vector<int64_t>(x.begin() + 2, x.end()), kernel, false);
  s.outDims = {s.batch, s.outChannels};
  s.outDims.insert(s.outDims.end(), s.window.out.begin(), s.window.out.end());
  return s;
}

namespace {

// For each spatial axis: input coordinate of kernel tap k at output position o (table[k * out + o]), -1 in padding.
std::vector<std::vector<int64_t>> tapCoordinates(const Window& w) {
  std::vector<std::vector<int64_t>> t(w.rank());
  for (size_t d = 0; d < w.rank(); ++d) {
    t[d].resize(static_cast<size_t>(w.kernel[d] * w.out[d]));
    for (int64_t k = 0; k < w.kernel[d]; ++k)
      for (int64_t o = 0; o < w.out[d]; ++o) {
        const int64_t c = o * w.stride[d] - w.padBegin[d] + k * w.dilation[d];
        t[d][static_cast<size_t>(k * w.out[d] + o)] = c >= 0 && c < w.in[d] ? c : -1;
      }
  }
  return t;
}

// Advances a row-major multi-index over the first `count` extents.
void advance(std::vector<int64_t>& idx, const std::vector<int64_t>& extents, size_t count) {
  for (size_t d = count; d-- > 0;) {
    if (++idx[d] < extents[d]) return;
    idx[d] = 0;
  }
}

// col[row, o] for rows (channel, kernel tap) over `channels` channels of x and the output positions of output lines
// [line0, line1) (a line = the last spatial axis): the input element each position reads through that tap, 0 in the
// padding.
template <typename W>
void im2col(const Window& w, const std::vector<std::vector<int64_t>>& taps, const W* x, int64_t channels,
            int64_t line0, int64_t line1, W* col) {
  const size_t r = w.rank();
  const int64_t kSize = *checkedProduct(w.kernel), inSize = *checkedProduct(w.in);
  const int64_t lastOut = w.out[r - 1];
  if (line1 <= line0 || lastOut == 0) return;
  const std::vector<int64_t> inStride = stridesOf(w.in);
  std::vector<int64_t> k(r, 0), first(r, 0), o(r, 0);
  for (size_t d = r - 1, rest = static_cast<size_t>(line0); d-- > 0;) {  // line0 as an index over the outer axes
    first[d] = static_cast<int64_t>(rest % static_cast<size_t>(w.out[d]));
    rest /= static_cast<size_t>(w.out[d]);
  }
  W* dst = col;
  for (int64_t row = 0; row < channels * kSize; ++row, advance(k, w.kernel, r)) {
    const W* xc = x + (row / kSize) * inSize;
    o = first;
    for (int64_t q = line0; q < line1; ++q, advance(o, w.out, r - 1)) {
      int64_t base = 0;
      bool inside = true;
      for (size_t d = 0; d + 1 < r; ++d) {
        const int64_t c = taps[d][static_cast<size_t>(k[d] * w.out[d] + o[d])];
        inside = inside && c >= 0;
        base += c * inStride[d];
      }
      const int64_t* last = &taps[r - 1][static_cast<size_t>(k[r - 1] * lastOut)];
      for (int64_t i = 0; i < lastOut; ++i) *dst++ = inside && last[i] >= 0 ? xc[base + last[i]] : W(0);
    }
  }
}

// im2col for 2-D windows: per (channel, tap) row and output line, the columns that read padding are zeroed and the
// rest copied as one span (a memcpy at stride 1), instead of a table lookup and a padding test per element.
template <typename W>
void im2col2d(const Window& w, const W* x, int64_t channels, int64_t line0, int64_t line1, W* col) {
  const int64_t inH = w.in[0], inW = w.in[1], kH = w.kernel[0], kW = w.kernel[1], outW = w.out[1];
  const int64_t sH = w.stride[0], sW = w.stride[1];
  W* dst = col;
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t kh = 0; kh < kH; ++kh)
      for (int64_t kw = 0; kw < kW; ++kw) {
        const int64_t offset = kw * w.dilation[1] - w.padBegin[1];
        const auto [lo, hi] = insideColumns(offset, sW, inW, outW);
        for (int64_t oh = line0; oh < line1; ++oh, dst += outW) {
          const int64_t ih = oh * sH - w.padBegin[0] + kh * w.dilation[0];
          if (ih < 0 || ih >= inH) {
            std::fill_n(dst, outW, W(0));
            continue;
          }
          const W* row = x + (c * inH + ih) * inW;
          std::fill_n(dst, lo, W(0));
          if (sW == 1)
            std::copy_n(row + lo + offset, hi - lo, dst + lo);
          else
            for (int64_t o = lo; o < hi; ++o) dst[o] = row[o * sW + offset];
          std::fill_n(dst + hi, outW - hi, W(0));
        }
      }
}

// count (at most a sliver's width) floats from `from` to `to`: with AVX-512 two masked moves, where a call to
// memmove per run of a sliver row cost more than the run (a sixth of Inception's gathers).
inline void copyRun(const float* from, int64_t count, float* to) {
#if defined(__AVX512F__)
  if (count > 32) return void(std::copy_n(from, count, to));
  const auto lanes = [](int64_t k) {
    return k >= 16 ? __mmask16(0xffff) : k <= 0 ? __mmask16(0) : __mmask16((1u << k) - 1);
  };
  _mm512_mask_storeu_ps(to, lanes(count), _mm512_maskz_loadu_ps(lanes(count), from));
  if (count > 16) _mm512_mask_storeu_ps(to + 16, lanes(count - 16), _mm512_maskz_loadu_ps(lanes(count - 16), from + 16));
#else
  std::copy_n(from, count, to);
#endif
}

// to[i] = from[2i] for i < count (at most a sliver's width): a stride-2 convolution's run (every ResNet's and
// Inception's 7×7 stem: scalar, the gather took as long as the product). Reads no further than from[2·count - 2].
inline void copyEverySecond(const float* from, int64_t count, float* to) {
#if defined(__AVX512F__)
  if (count <= 32) {
    const auto lanes = [](int64_t k) {
      return k >= 16 ? __mmask16(0xffff) : k <= 0 ? __mmask16(0) : __mmask16((1u << k) - 1);
    };
    const int64_t span = 2 * count - 1;  // elements read
    const __m512i evens = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    for (int64_t h = 0; h < count; h += 16) {  // 16 outputs from 32 inputs at a time
      const __m512 lo = _mm512_maskz_loadu_ps(lanes(span - 2 * h), from + 2 * h);
      const __m512 hi = _mm512_maskz_loadu_ps(lanes(span - 2 * h - 16), from + 2 * h + 16);
      _mm512_mask_storeu_ps(to + h, lanes(count - h), _mm512_permutex2var_ps(lo, evens, hi));
    }
    return;
  }
#endif
  for (int64_t o = 0; o < count; ++o) to[o] = from[2 * o];
}

// What im2col2d writes, for the rows [p0, p0 + depth) and columns [j0, j0 + width) of one image and group, gathered
// straight into a GEMM sliver (kernels/sgemm_tiles.h): the product reads the same values and gives the same bits,
// without an im2col matrix written out and read back (7 MiB for a 3×3 convolution over 56×56×64, beyond L2).
// Rows walk (channel, kh, kw) without division; each row's columns are runs along output lines.
class ColumnGather {
 public:
  ColumnGather(const Window& w, const float* x) : w_(w), x_(x) {
    for (int64_t kw = 0; kw < w.kernel[1]; ++kw) {
      const int64_t offset = kw * w.dilation[1] - w.padBegin[1];
      const auto [lo, hi] = insideColumns(offset, w.stride[1], w.in[1], w.out[1]);
      spans_.push_back({offset, lo, hi});
    }
  }
  void operator()(int64_t p0, int64_t depth, int64_t j0, int width, float* sliver) const {
    const int64_t kH = w_.kernel[0], kW = w_.kernel[1], outW = w_.out[1], inH = w_.in[0], inW = w_.in[1];
    const int64_t sH = w_.stride[0], sW = w_.stride[1];
    int64_t c = p0 / (kH * kW), kh = p0 / kW % kH, kw = p0 % kW;
    for (int64_t p = 0; p < depth; ++p) {
      const Span& t = spans_[static_cast<size_t>(kw)];
      float* dst = sliver + p * kSliverWidth;
      int64_t oh = j0 / outW, ow = j0 % outW;
      for (int64_t jj = 0; jj < width; ow = 0, ++oh) {
        const int64_t run = std::min<int64_t>(width - jj, outW - ow), end = ow + run;
        float* out = dst + jj - ow;  // out[o]: output column o of this line
        const int64_t ih = oh * sH - w_.padBegin[0] + kh * w_.dilation[0];
        const int64_t a = ih < 0 || ih >= inH ? end : std::clamp(t.lo, ow, end), b = std::clamp(t.hi, a, end);
        for (int64_t o = ow; o < a; ++o) out[o] = 0.0f;
        if (a < b) {
          const float* row = x_ + (c * inH + ih) * inW + t.offset;
          if (sW == 1)
            copyRun(row + a, b - a, out + a);
          else if (sW == 2)
            copyEverySecond(row + a * 2, b - a, out + a);
          else
            for (int64_t o = a; o < b; ++o) out[o] = row[o * sW];
        }
        for (int64_t o = b; o < end; ++o) out[o] = 0.0f;
        jj += run;
      }
      if (++kw == kW) {
        kw = 0;
        if (++kh == kH) kh = 0, ++c;
      }
    }
  }

 private:
  struct Span {
    int64_t offset, lo, hi;
  };
  const Window& w_;
  const float* x_;
  std::vector<Span> spans_;
};

// The im2col matrix of a convolution larger than this is gathered column sliver by column sliver instead of written
// out (where the kernel allows: kernels/sgemm_tiles.h); a smaller one stays in L2 and im2col's long runs are cheaper
// than the gather's short ones.
constexpr int64_t kGatherColumnsFrom = int64_t{1} << 20;

// A product finished band by band (bias, channel steps) holds about this many floats a band (half of L2), but
// has at least kFinishBandMin columns (eight GEMM panels: fewer and a large weight matrix is read once per band).
constexpr int64_t kFinishBandFloats = int64_t(512) << 10 >> 2;
constexpr int64_t kFinishBandMin = 256;

// A large group-1 convolution (one that would gather its columns) over a plane of more positions than output
// channels: its input transposed into NC1HWC0 blocks, computed directly on them (conv_nc1hwc0_direct.cpp), and the
// output blocks transposed back — two passes over the input and output instead of gathering each tap's columns
// (nine times the input for a 3×3 window). The same chains, so the same bits as the GEMM's way.
bool convolveThroughBlocks(const KernelContext& ctx, const ConvShape& s, const float* x, const float* w,
                           const float* bias, float* y, const ChannelSteps* steps) {
  if (!planeWorthDirect(s)) return false;
  constexpr int64_t kC0 = 16;
  const int64_t inSize = s.window.in[0] * s.window.in[1], outSize = s.window.out[0] * s.window.out[1];
  const int64_t c1 = (s.inChannels + kC0 - 1) / kC0, m1 = (s.outChannels + kC0 - 1) / kC0;
  // Only where the gather would move more: blocks of 16 channels cost a 3-channel image five times its size (a
  // stem convolution gathers less than that).
  const int64_t gathered = s.inChannels * s.window.kernel[0] * s.window.kernel[1] * outSize;
  if (gathered < 2 * (2 * c1 * kC0 * inSize + m1 * kC0 * outSize)) return false;
  const int64_t xFloats = mul(ctx, mul(ctx, s.batch, c1 * kC0), inSize);
  const int64_t yFloats = mul(ctx, mul(ctx, s.batch, m1 * kC0), outSize);
  checkScratch(ctx, xFloats + yFloats, sizeof(float));
  const auto xb = std::make_unique_for_overwrite<float[]>(static_cast<size_t>(xFloats));
  const auto yb = std::make_unique_for_overwrite<float[]>(static_cast<size_t>(yFloats));
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t b = 0; b < c1; ++b)
      rowsToBlocks(x + (n * s.inChannels + b * kC0) * inSize, inSize, inSize, std::min(kC0, s.inChannels - b * kC0),
                   xb.get() + (n * c1 + b) * inSize * kC0);
  if (!convolveNc1hwc0Direct(s, xb.get(), w, bias, yb.get())) return false;
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t b = 0; b < m1; ++b)
      blocksToRows(yb.get() + (n * m1 + b) * outSize * kC0, outSize, std::min(kC0, s.outChannels - b * kC0),
                   y + (n * s.outChannels + b * kC0) * outSize, outSize);
  if (steps)
    for (int64_t n = 0; n < s.batch; ++n)
      for (int64_t c = 0; c < s.outChannels; ++c) applyChannelSteps(*steps, c, y + (n * s.outChannels + c) * outSize, outSize);
  return true;
}

template <typename W>
void addBias(const W* bias, int64_t batch, int64_t channels, int64_t size, W* y) {
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t c = 0; c < channels; ++c) {
      W* p = y + (n * channels + c) * size;
      for (int64_t i = 0; i < size; ++i) p[i] += bias[c];
    }
}

bool isPointwise(const Window& w) {
  for (size_t d = 0; d < w.rank(); ++d)
    if (w.kernel[d] != 1 || w.stride[d] != 1 || w.padBegin[d] != 0 || w.in[d] != w.out[d]) return false;
  return true;
}


template <typename W>
void convolveImpl(const KernelContext& ctx, const ConvShape& s, const W* x, const W* w, const W* bias, W* y,
                  const ChannelSteps* steps) {
  if (convolveDepthwise2d(s, x, w, bias, y, steps)) return;
  const Window& win = s.window;
  const int64_t kSize = *checkedProduct(win.kernel), inSize = *checkedProduct(win.in);
  const int64_t outSize = *checkedProduct(win.out);
  const int64_t cg = s.inChannels / s.group, mg = s.outChannels / s.group;
  const int64_t rows = mul(ctx, cg, kSize);
  const bool pointwise = isPointwise(win);  // a 1×1 stride-1 conv multiplies X itself: no im2col copy
  const int64_t lastOut = win.out.back();
  const int64_t lines = lastOut ? outSize / lastOut : 0;
  const int64_t lineBytes = std::max<int64_t>(1, mul(ctx, mul(ctx, rows, lastOut), int64_t(sizeof(W))));
  const int64_t band = std::clamp<int64_t>(kColumnBandBytes / lineBytes, 1, std::max<int64_t>(lines, 1));
  bool gather = false;
  if constexpr (std::is_same_v<W, float>) {
    int64_t colBytes = 0;  // the whole im2col matrix (an overflow is a large one)
    const bool huge = __builtin_mul_overflow(lineBytes, lines, &colBytes);
    gather = !pointwise && win.rank() == 2 && (huge || colBytes > kGatherColumnsFrom) && tiledSgemmAvailable();
    if (gather && s.group == 1 && convolveThroughBlocks(ctx, s, x, w, bias, y, steps)) return;
  }
  // Not zeroed: im2col writes every element of a band (padding as zeros) and the GEMM every element of `part`.
  std::unique_ptr<W[]> col, part;
  std::vector<std::vector<int64_t>> taps;
  if (!pointwise && !gather && rows > 0 && outSize > 0) {
    checkScratch(ctx, mul(ctx, rows, band * lastOut), sizeof(W));
    col.reset(new W[static_cast<size_t>(rows * band * lastOut)]);
    if (band < lines) part.reset(new W[static_cast<size_t>(mg * band * lastOut)]);
    taps = tapCoordinates(win);
  }
  // The bias and the steps go over each product while it is in cache: `width` elements of each of the group's
  // channels, `stride` apart.
  const auto finish = [&](int64_t g, W* p, int64_t width, int64_t stride) {
    if (!bias && !steps) return;
    for (int64_t m = 0; m < mg; ++m) {
      const int64_t c = g * mg + m;
      W* row = p + m * stride;
      if (bias)
        for (int64_t i = 0; i < width; ++i) row[i] += bias[c];
      if (steps) applyChannelSteps(*steps, c, row, width);
    }
  };
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t g = 0; g < s.group; ++g) {
      const W* xg = x + (n * s.inChannels + g * cg) * inSize;
      W* yg = y + (n * s.outChannels + g * mg) * outSize;
      const W* wg = w + g * mg * rows;
      if constexpr (std::is_same_v<W, float>)
        if ((gather || (pointwise && plainProductIsTiled(mg, outSize, rows))) && rows > 0 && outSize > 0) {
          // Band by band of columns when a bias or steps follow, each band finished while it is in L2 (a
          // MobileNet expansion's output is 5 MB: finished afterwards, it went to memory and back). Each output is
          // the same chain of products whatever the band (kernels/sgemm_tiles.h): the same bits.
          const int64_t columnBand =
              bias || steps ? std::max(kFinishBandMin, kFinishBandFloats / mg / kSliverWidth * kSliverWidth) : outSize;
          std::optional<ColumnGather> columns;
          if (gather) columns.emplace(win, xg);
          for (int64_t j0 = 0; j0 < outSize; j0 += columnBand) {
            const int64_t width = std::min(columnBand, outSize - j0);
            if (gather)
              tiledSgemm(mg, width, rows, wg, rows, [&](int64_t p0, int64_t depth, int64_t c0, int cw, float* sliver) {
                (*columns)(p0, depth, j0 + c0, cw, sliver);
              }, yg + j0, outSize);
            else
              tiledSgemm(mg, width, rows, wg, rows, xg + j0, outSize, yg + j0, outSize);
            finish(g, yg + j0, width, outSize);
          }
          continue;
        }
      if (pointwise || !col) {
        gemm(false, false, mg, outSize, rows, W(1), wg, xg, W(0), yg);
        finish(g, yg, outSize, outSize);
        continue;
      }
      for (int64_t line0 = 0; line0 < lines; line0 += band) {
        const int64_t line1 = std::min(lines, line0 + band), width = (line1 - line0) * lastOut;
        if (win.rank() == 2)
          im2col2d(win, xg, cg, line0, line1, col.get());
        else
          im2col(win, taps, xg, cg, line0, line1, col.get());
        if (band >= lines) {
          gemm(false, false, mg, outSize, rows, W(1), wg, col.get(), W(0), yg);
          finish(g, yg, outSize, outSize);
          continue;
        }
        gemm(false, false, mg, width, rows, W(1), wg, col.get(), W(0), part.get());
        finish(g, part.get(), width, width);
        for (int64_t m = 0; m < mg; ++m)
          std::copy_n(part.get() + m * width, width, yg + m * outSize + line0 * lastOut);
      }
    }
}

}  // namespace

void convolve(const KernelContext& ctx, const ConvShape& s, const float* x, const float* w, const float* bias,
              float* y, const ChannelSteps* steps) {
  convolveImpl(ctx, s, x, w, bias, y, steps);
}
void convolve(const KernelContext& ctx, const ConvShape& s, const double* x, const double* w, const double* bias,
              double* y, const ChannelSteps* steps) {
  convolveImpl(ctx, s, x, w, bias, y, steps);
}

}  // namespace nn

namespace {

template <typename S>
Tensor convTyped(const KernelContext& ctx, const Tensor& x, const Tensor& w, const Tensor* b) {
  using W = nn::ConvWork<S>;
  const nn::ConvShape s = nn::convShape(ctx, x.dims(), w.dims(), b);
  nn::Result<S, W> y(ctx, x.dtype(), s.outDims);  // size check before any work
  const nn::Operand<S, W> xv(ctx, x), wv(ctx, w);
  const std::optional<nn::Operand<S, W>> bv = b ? std::optional<nn::Operand<S, W>>(std::in_place, ctx, *b) : std::nullopt;
  nn::convolve(ctx, s, xv.data(), wv.data(), bv ? bv->data() : nullptr, y.data());
  return y.finish();
}

void requireSameType(const KernelContext& ctx, size_t count) {
  for (size_t i = 1; i < count; ++i)
    if (ctx.input(i) && ctx.input(i)->dtype() != ctx.required(0).dtype())
      ctx.fail("input " + std::to_string(i) + " has another element type than X");
}

std::vector<Tensor> convKernel(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  const Tensor& w = ctx.required(1);
  requireSameType(ctx, 3);
  std::vector<Tensor> out;
  dispatch<kFloats>(x.dtype(),
                    [&](auto tag) { out.push_back(convTyped<typename decltype(tag)::type>(ctx, x, w, ctx.input(2))); });
  return out;
}

// ConvTranspose geometry: X [N, C, in...], W [C, M/group, k...] -> Y [N, M, out...].
struct TransposedShape {
  int64_t batch = 0, inChannels = 0, outChannels = 0, group = 1;
  nn::Window window;  // in = X's spatial extents, out = Y's; padBegin may be negative (output_shape beyond)
  std::vector<int64_t> outDims;
};

TransposedShape transposedShape(const KernelContext& ctx, const std::vector<int64_t>& x, const std::vector<int64_t>& w,
                                const Tensor* bias) {
  const Node& node = ctx.node();
  if (x.size() < 3) ctx.fail("X must have rank 3 or more ([N, C, spatial...])");
  if (w.size() != x.size()) ctx.fail("W's rank differs from X's");
  TransposedShape s;
  const size_t r = x.size() - 2;
  s.batch = x[0];
  s.inChannels = x[1];
  s.group = node.attrInt("group", 1);
  if (s.group < 1 || s.inChannels % s.group != 0) ctx.fail("group does not divide the input channels");
  if (w[0] != s.inChannels) ctx.fail("W's first dim must be X's channel count");
  s.outChannels = nn::mul(ctx, w[1], s.group);
  if (bias && (bias->dims().size() != 1 || bias->dims()[0] != s.outChannels))
    ctx.fail("B must be a vector of the output channel count");
  nn::Window& win = s.window;
  win.in.assign(x.begin() + 2, x.end());
  win.kernel.assign(w.begin() + 2, w.end());
  nn::checkKernelShape(ctx, win.kernel);
  win.stride = nn::perAxis(ctx, "strides", r, 1, 1);
  win.dilation = nn::perAxis(ctx, "dilations", r, 1, 1);
  const std::vector<int64_t> pads = nn::perAxis(ctx, "pads", 2 * r, 0, 0);
  const std::vector<int64_t> outputPadding = nn::perAxis(ctx, "output_padding", r, 0, 0);
  std::vector<int64_t> outputShape =
      hasAttr(node, "output_shape") ? node.attrInts("output_shape") : std::vector<int64_t>{};
  if (outputShape.size() == r + 2) outputShape.erase(outputShape.begin(), outputShape.begin() + 2);  // [N, C, ...]
  if (!outputShape.empty() && outputShape.size() != r) ctx.fail("output_shape does not match the spatial rank");
  const std::string autoPad = node.attrString("auto_pad", "NOTSET");
  const bool same = autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER";
  if (!same && autoPad != "VALID" && autoPad != "NOTSET") ctx.fail("unknown auto_pad '" + autoPad + "'");
  for (size_t i = 0; i < r; ++i) {
    if (win.kernel[i] < 1) ctx.fail("kernel extent is not positive");
    // Full (unpadded) extent of the scattered output: stride · (in - 1) + output_padding + effective kernel.
    const int64_t full =
        nn::add(ctx, nn::add(ctx, nn::mul(ctx, win.stride[i], std::max<int64_t>(win.in[i] - 1, 0)), outputPadding[i]),
                nn::effectiveKernel(ctx, win.kernel[i], win.dilation[i]));
    if (!outputShape.empty() || same) {
      // The output extent is given (or in · stride); the difference is padding, split as ONNX specifies (with
      // floor division, so a negative total extends the output at its end).
      const int64_t out = !outputShape.empty() ? outputShape[i] : nn::mul(ctx, win.in[i], win.stride[i]);
      const int64_t total = nn::add(ctx, full, -out);
      win.padBegin.push_back(autoPad == "SAME_UPPER" ? nn::floorDiv(total, 2) : total - nn::floorDiv(total, 2));
      win.out.push_back(out);
    } else {
      const int64_t pb = autoPad == "VALID" ? 0 : pads[i], pe = autoPad == "VALID" ? 0 : pads[i + r];
      win.padBegin.push_back(pb);
      win.out.push_back(nn::add(ctx, full, -nn::add(ctx, pb, pe)));
    }
    if (win.out.back() < 0) ctx.fail("output extent is negative");
  }
  s.outDims = {s.batch, s.outChannels};
  s.outDims.insert(s.outDims.end(), win.out.begin(), win.out.end());
  return s;
}

// Adds col[row, i] (rows = output channel × kernel tap, i = input position) into y at the output position input i
// reaches through that tap. (Not inlined: GCC 12 reports a false -Wfree-nonheap-object on its vectors when it is.)
template <typename W>
[[gnu::noinline]] void col2im(const nn::Window& w, const W* col, int64_t channels, W* y) {
  const size_t r = w.rank();
  const int64_t kSize = *checkedProduct(w.kernel), inSize = *checkedProduct(w.in), outSize = *checkedProduct(w.out);
  const std::vector<int64_t> outStride = stridesOf(w.out);
  std::vector<int64_t> k(r, 0);
  for (int64_t row = 0; row < channels * kSize; ++row, nn::advance(k, w.kernel, r)) {
    W* yc = y + (row / kSize) * outSize;
    std::vector<int64_t> i(r, 0);
    for (int64_t p = 0; p < inSize; ++p, nn::advance(i, w.in, r)) {
      int64_t at = 0;
      bool inside = true;
      for (size_t d = 0; d < r && inside; ++d) {
        const int64_t c = i[d] * w.stride[d] - w.padBegin[d] + k[d] * w.dilation[d];
        inside = c >= 0 && c < w.out[d];
        at += c * outStride[d];
      }
      if (inside) yc[at] += col[row * inSize + p];
    }
  }
}

template <typename S>
Tensor convTransposeTyped(const KernelContext& ctx, const Tensor& x, const Tensor& w, const Tensor* b) {
  using W = nn::Work<S>;
  const TransposedShape s = transposedShape(ctx, x.dims(), w.dims(), b);
  OutBuffer probe(ctx, x.dtype(), s.outDims);
  const nn::Window& win = s.window;
  const int64_t kSize = *checkedProduct(win.kernel), inSize = *checkedProduct(win.in);
  const int64_t outSize = *checkedProduct(win.out);
  const int64_t cg = s.inChannels / s.group, mg = s.outChannels / s.group;
  const int64_t rows = nn::mul(ctx, mg, kSize);
  const std::vector<W> xv = nn::loadAll<S, W>(ctx, x), wv = nn::loadAll<S, W>(ctx, w);
  checkScratch(ctx, probe.numel(), sizeof(W));
  checkScratch(ctx, nn::mul(ctx, rows, inSize), sizeof(W));
  std::vector<W> y(static_cast<size_t>(probe.numel())), col(static_cast<size_t>(rows * inSize));
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t g = 0; g < s.group; ++g) {
      // col = W[g]ᵀ · X[n, g]: W[g] is stored [C/group, M/group · taps].
      nn::gemm(true, false, rows, inSize, cg, W(1), wv.data() + g * cg * rows,
               xv.data() + (n * s.inChannels + g * cg) * inSize, W(0), col.data());
      if (outSize > 0) col2im(win, col.data(), mg, y.data() + (n * s.outChannels + g * mg) * outSize);
    }
  if (b) {
    const std::vector<W> bv = nn::loadAll<S>(ctx, *b);
    nn::addBias(bv.data(), s.batch, s.outChannels, outSize, y.data());
  }
  return nn::storeAll<S>(ctx, s.outDims, y);
}

std::vector<Tensor> convTransposeKernel(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  const Tensor& w = ctx.required(1);
  requireSameType(ctx, 3);
  std::vector<Tensor> out;
  dispatch<kFloats>(x.dtype(), [&](auto tag) {
    out.push_back(convTransposeTyped<typename decltype(tag)::type>(ctx, x, w, ctx.input(2)));
  });
  return out;
}

}  // namespace

void registerConvKernels(KernelRegistry& r) {
  r.add("Conv", convKernel);
  r.add("ConvTranspose", convTransposeKernel);
}

}  // namespace kiln::kernels
