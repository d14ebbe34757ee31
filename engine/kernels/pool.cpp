// Pools: MaxPool (with the optional Indices output and storage_order), AveragePool (count_include_pad), LpPool,
// each with strides, dilations, pads, auto_pad and ceil_mode (the window geometry of nn_kernels.h), and their
// Global forms over all spatial axes. Windows only read elements inside the input: padding is -inf for MaxPool,
// 0 for LpPool, and for AveragePool counts in the divisor only with count_include_pad (a ceil-mode window's part
// beyond the end padding never counts).
#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

#include "kernels/nn_kernels.h"
#include "ir/graph.h"
#include "ir/shape.h"

namespace kiln::kernels {
namespace {

enum class Pool { Max, Average, Lp };

struct Planes {
  int64_t count = 0;  // N · C
  std::vector<int64_t> spatial;
};

Planes planesOf(const KernelContext& ctx, const Tensor& x, size_t minRank) {
  if (x.dims().size() < minRank) ctx.fail("X must have rank " + std::to_string(minRank) + " or more");
  Planes p;
  const std::optional<int64_t> count = checkedMul(x.dims()[0], x.dims()[1]);
  if (!count) ctx.fail("N · C overflows");
  p.count = *count;
  p.spatial.assign(x.dims().begin() + 2, x.dims().end());
  return p;
}

int64_t ceilDiv(int64_t a, int64_t b) { return a / b + ((a % b != 0) && ((a < 0) == (b < 0)) ? 1 : 0); }

void advance(std::vector<int64_t>& idx, const std::vector<int64_t>& extents) {
  for (size_t d = extents.size(); d-- > 0;) {
    if (++idx[d] < extents[d]) return;
    idx[d] = 0;
  }
}

double lpNorm(const KernelContext& ctx) {
  const int64_t p = ctx.node().attrInt("p", 2);
  if (p < 1) ctx.fail("p must be positive");
  return static_cast<double>(p);
}

// Per output position along one spatial axis: where its window starts, the taps [lo, hi) that land inside the input,
// and how many count in an average's divisor.
struct AxisTaps {
  int64_t start = 0, lo = 0, hi = 0, counted = 0;
};
std::vector<AxisTaps> axisTaps(const nn::Window& w, size_t d, bool includePad) {
  std::vector<AxisTaps> t(static_cast<size_t>(w.out[d]));
  const int64_t dil = w.dilation[d];
  for (int64_t o = 0; o < w.out[d]; ++o) {
    AxisTaps& a = t[static_cast<size_t>(o)];
    a.start = o * w.stride[d] - w.padBegin[d];
    const auto tapsIn = [&](int64_t lo, int64_t hi) {  // taps k with start + k·dil in [lo, hi)
      return std::pair{std::max<int64_t>(0, ceilDiv(lo - a.start, dil)),
                       std::min<int64_t>(w.kernel[d], hi - a.start <= 0 ? 0 : (hi - a.start - 1) / dil + 1)};
    };
    std::tie(a.lo, a.hi) = tapsIn(0, w.in[d]);
    const auto [pLo, pHi] = tapsIn(-w.padBegin[d], w.in[d] + w.padEnd[d]);
    a.counted = std::max<int64_t>(0, includePad ? pHi - pLo : a.hi - a.lo);
  }
  return t;
}

// One output row of a 3×3 window at column stride S from the padded plane's rows top, top + width, top + 2·width:
// each output takes its 9 taps row by row, column by column (the order of pool2dFloat's passes), in registers.
template <Pool K, int S>
void poolRow3(const float* top, int64_t width, int64_t outW,
              std::conditional_t<K == Pool::Max, float, double>* __restrict a) {
  const float* r0 = top;
  const float* r1 = top + width;
  const float* r2 = top + 2 * width;
  for (int64_t o = 0; o < outW; ++o) {
    const float* t[3] = {r0 + o * S, r1 + o * S, r2 + o * S};
    if constexpr (K == Pool::Max) {
      float m = -std::numeric_limits<float>::infinity();
#pragma GCC unroll 3
      for (int kh = 0; kh < 3; ++kh)
#pragma GCC unroll 3
        for (int kw = 0; kw < 3; ++kw) m = t[kh][kw] > m ? t[kh][kw] : m;
      a[o] = m;
    } else {
      double sum = 0;
#pragma GCC unroll 3
      for (int kh = 0; kh < 3; ++kh)
#pragma GCC unroll 3
        for (int kw = 0; kw < 3; ++kw) sum += static_cast<double>(t[kh][kw]);
      a[o] = sum;
    }
  }
}

// pool2d (below) for fp32 tensors: each plane is copied once into a plane padded with the value padding stands for (-inf for
// MaxPool, 0 for AveragePool), then every output row takes its taps kernel row by kernel row, column by column, as a
// pass over the row that vectorises (the running maxima in float, exact; the sums in double, in the order pool2d
// sums them). False, nothing done, when the padding is out of proportion to the image (the copy would be far larger).
// One difference from pool2d: a NaN among a window's inputs wins there only as the window's first inside tap, here never.
template <Pool K>
bool pool2dFloat(const Tensor& x, OutBuffer& y, const Planes& planes, const nn::Window& w, bool includePad) {
  const nn::PaddedPlane pad = nn::paddedPlane(w);
  if (!pad.worthIt || reinterpret_cast<uintptr_t>(x.data()) % alignof(float) != 0) return false;
  const int64_t padW = pad.width, inH = w.in[0], inW = w.in[1], outH = w.out[0], outW = w.out[1];
  using Acc = std::conditional_t<K == Pool::Max, float, double>;
  const float fill = K == Pool::Max ? -std::numeric_limits<float>::infinity() : 0.0f;
  const std::vector<AxisTaps> rows = axisTaps(w, 0, includePad), cols = axisTaps(w, 1, includePad);
  std::vector<double> colCount(static_cast<size_t>(outW));
  for (int64_t o = 0; o < outW; ++o) colCount[static_cast<size_t>(o)] = static_cast<double>(cols[static_cast<size_t>(o)].counted);
  const auto* px = reinterpret_cast<const float*>(x.data());
  auto* py = reinterpret_cast<float*>(y.data());
  std::vector<float> padded;
  std::vector<Acc> acc(static_cast<size_t>(outW));
  const int64_t sW = w.stride[1];
  const bool square3 = w.kernel[0] == 3 && w.kernel[1] == 3 && w.dilation[0] == 1 && w.dilation[1] == 1 &&
                       (sW == 1 || sW == 2);
  // At stride 1 the rows of outputs are the padded plane's rows: one pass over the plane as a single row computes
  // them all (and padW - outW spare outputs per row, beyond its end, never stored), instead of a short pass per
  // output row (14 or 7 outputs on Inception's later planes, mostly loop overhead). The plane gets two elements of
  // slack: the last spare outputs' taps reach that far.
  const bool flat = square3 && sW == 1 && w.stride[0] == 1;
  if (flat) acc.resize(static_cast<size_t>(outH * padW));
  for (int64_t plane = 0; plane < planes.count; ++plane) {
    nn::copyIntoPadded(w, pad, px + plane * inH * inW, fill, padded);
    if (flat) {
      padded.resize(padded.size() + 2, fill);
      poolRow3<K, 1>(padded.data(), padW, outH * padW, acc.data());
    }
    for (int64_t oh = 0; oh < outH; ++oh) {
      Acc* a = flat ? acc.data() + oh * padW : acc.data();
      const float* top = padded.data() + oh * w.stride[0] * padW;
      if (square3 && !flat) {  // all 9 taps of each output in registers, in the order of the passes below
        if (sW == 1)
          poolRow3<K, 1>(top, padW, outW, a);
        else
          poolRow3<K, 2>(top, padW, outW, a);
      }
      if (!square3) std::fill(acc.begin(), acc.end(), K == Pool::Max ? Acc(fill) : Acc(0));
      for (int64_t kh = 0; !square3 && kh < w.kernel[0]; ++kh) {
        const float* line = padded.data() + (oh * w.stride[0] + kh * w.dilation[0]) * padW;
        for (int64_t kw = 0; kw < w.kernel[1]; ++kw) {
          const float* in = line + kw * w.dilation[1];
          if constexpr (K == Pool::Max) {
            for (int64_t o = 0; o < outW; ++o) a[o] = in[o * sW] > a[o] ? in[o * sW] : a[o];
          } else {
            for (int64_t o = 0; o < outW; ++o) a[o] += static_cast<double>(in[o * sW]);
          }
        }
      }
      float* out = py + (plane * outH + oh) * outW;
      if constexpr (K == Pool::Max) {
        std::copy_n(a, outW, out);
      } else {
        const double rowCount = static_cast<double>(rows[static_cast<size_t>(oh)].counted);
        for (int64_t o = 0; o < outW; ++o) {
          const double counted = rowCount * colCount[static_cast<size_t>(o)];
          out[o] = counted > 0 ? static_cast<float>(a[o] / counted) : 0.0f;
        }
      }
    }
  }
  return true;
}

// 2-D MaxPool / AveragePool of floats without Indices (every CNN's pools): the windows, comparisons and sums of
// poolTyped below in the same order, with the inside taps of each output row and column found once rather than
// per output per tap (ResNet-50's one MaxPool took a seventh of its reference run that way).
template <Pool K, typename S>
Tensor pool2d(const KernelContext& ctx, const Tensor& x, const Planes& planes, const nn::Window& w) {
  using C = ComputeOf<S>;
  const std::vector<int64_t> outDims{x.dims()[0], x.dims()[1], w.out[0], w.out[1]};
  OutBuffer y(ctx, x.dtype(), outDims, HeapStorage::Start::Unset);  // every element is written
  const bool includePad = ctx.node().attrInt("count_include_pad", 0) != 0;
  if constexpr (std::is_same_v<S, float>)
    if (pool2dFloat<K>(x, y, planes, w, includePad)) return y.finish();
  const std::vector<AxisTaps> rows = axisTaps(w, 0, includePad), cols = axisTaps(w, 1, includePad);
  const int64_t inW = w.in[1], inSize = w.in[0] * w.in[1], dilH = w.dilation[0], dilW = w.dilation[1];
  const uint8_t* px = x.data();
  uint8_t* py = y.data();
  int64_t at = 0;
  for (int64_t plane = 0; plane < planes.count; ++plane)
    for (const AxisTaps& r : rows)
      for (const AxisTaps& c : cols) {
        double acc = K == Pool::Max ? -std::numeric_limits<double>::infinity() : 0.0;
        bool first = true;
        for (int64_t kh = r.lo; kh < r.hi; ++kh) {
          const int64_t line = plane * inSize + (r.start + kh * dilH) * inW + c.start;
          for (int64_t kw = c.lo; kw < c.hi; ++kw) {
            const double v = static_cast<double>(Elem<S>::load(px, line + kw * dilW));
            if constexpr (K == Pool::Max) {
              if (first || v > acc) acc = v;
              first = false;
            } else {
              acc += v;
            }
          }
        }
        if constexpr (K == Pool::Average) {
          const double counted = static_cast<double>(r.counted) * static_cast<double>(c.counted);
          acc = counted > 0 ? acc / counted : 0.0;
        }
        Elem<S>::store(py, at++, static_cast<C>(acc));
      }
  return y.finish();
}

// Slides the window over every plane; Y (and Indices for MaxPool) in S.
template <Pool K, typename S>
std::vector<Tensor> poolTyped(const KernelContext& ctx, const Tensor& x, const Planes& planes, const nn::Window& w) {
  using C = ComputeOf<S>;
  std::vector<int64_t> outDims{x.dims()[0], x.dims()[1]};
  outDims.insert(outDims.end(), w.out.begin(), w.out.end());
  OutBuffer y(ctx, x.dtype(), outDims);
  const bool wantIndices = K == Pool::Max && ctx.node().numOutputs() > 1 && ctx.node().output(1);
  OutBuffer indices(ctx, DType::Int64, wantIndices ? outDims : std::vector<int64_t>{0});
  const int64_t storageOrder = ctx.node().attrInt("storage_order", 0);
  if (storageOrder != 0 && storageOrder != 1) ctx.fail("storage_order must be 0 or 1");
  const bool includePad = ctx.node().attrInt("count_include_pad", 0) != 0;
  const double p = K == Pool::Lp ? lpNorm(ctx) : 2.0;
  const size_t r = w.rank();
  const int64_t inSize = *checkedProduct(w.in), outSize = *checkedProduct(w.out);
  const std::vector<int64_t> rowMajor = stridesOf(w.in);
  std::vector<int64_t> colMajor(r, 1);  // storage_order 1: the first spatial axis varies fastest
  for (size_t d = 1; d < r; ++d) colMajor[d] = colMajor[d - 1] * w.in[d - 1];
  std::vector<int64_t> o(r, 0), k(r, 0), kLo(r), kHi(r);
  int64_t at = 0;
  // With no output positions there is nothing to do (and N · C, unchecked by an empty output, may be huge).
  for (int64_t plane = 0; outSize > 0 && plane < planes.count; ++plane) {
    std::fill(o.begin(), o.end(), 0);
    for (int64_t q = 0; q < outSize; ++q, ++at, advance(o, w.out)) {
      double acc = K == Pool::Max ? -std::numeric_limits<double>::infinity() : 0.0;
      int64_t best = -1;
      // Per axis, only the taps that land inside the input are visited (so a huge kernel_shape over padding costs
      // nothing); the divisor counts taps inside the input, or inside input + pads with count_include_pad.
      double counted = 1;
      bool empty = false;
      for (size_t d = 0; d < r; ++d) {
        const int64_t start = o[d] * w.stride[d] - w.padBegin[d], dil = w.dilation[d];
        const auto tapsIn = [&](int64_t lo, int64_t hi) {  // taps k with start + k·dil in [lo, hi)
          return std::pair{std::max<int64_t>(0, ceilDiv(lo - start, dil)),
                           std::min<int64_t>(w.kernel[d], hi - start <= 0 ? 0 : (hi - start - 1) / dil + 1)};
        };
        std::tie(kLo[d], kHi[d]) = tapsIn(0, w.in[d]);
        const auto [pLo, pHi] = tapsIn(-w.padBegin[d], w.in[d] + w.padEnd[d]);
        empty = empty || kHi[d] <= kLo[d];
        counted *= static_cast<double>(std::max<int64_t>(0, includePad ? pHi - pLo : kHi[d] - kLo[d]));
      }
      k = kLo;
      for (bool more = !empty; more;) {
        int64_t flat = 0, column = 0;
        for (size_t d = 0; d < r; ++d) {
          const int64_t c = o[d] * w.stride[d] - w.padBegin[d] + k[d] * w.dilation[d];
          flat += c * rowMajor[d];
          column += c * colMajor[d];
        }
        const double v = static_cast<double>(Elem<S>::load(x.data(), plane * inSize + flat));
        if constexpr (K == Pool::Max) {
          if (best < 0 || v > acc) {
            acc = v;
            best = storageOrder ? column : flat;
          }
        } else if constexpr (K == Pool::Average) {
          acc += v;
        } else {
          acc += std::pow(std::fabs(v), p);
        }
        // Next inside tap; done after the last.
        more = false;
        for (size_t d = r; d-- > 0;) {
          if (++k[d] < kHi[d]) {
            more = true;
            break;
          }
          k[d] = kLo[d];
        }
      }
      if constexpr (K == Pool::Average) acc = counted > 0 ? acc / counted : 0.0;
      if constexpr (K == Pool::Lp) acc = std::pow(acc, 1.0 / p);
      if constexpr (kIsFloat<S>) {
        Elem<S>::store(y.data(), at, static_cast<C>(acc));
      } else {
        Elem<S>::store(y.data(), at, static_cast<C>(best < 0 ? 0 : acc));  // integer MaxPool: the max is exact
      }
      if (wantIndices) Elem<int64_t>::store(indices.data(), at, best < 0 ? -1 : plane * inSize + best);
    }
  }
  std::vector<Tensor> out{y.finish()};
  if (K == Pool::Max && ctx.node().numOutputs() > 1) out.push_back(indices.finish());
  return out;
}

template <Pool K>
std::vector<Tensor> pool(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  const Planes planes = planesOf(ctx, x, 3);
  if (!hasAttr(ctx.node(), "kernel_shape")) ctx.fail("kernel_shape is required");
  const std::vector<int64_t> kernel = ctx.node().attrInts("kernel_shape");
  if (kernel.size() != planes.spatial.size()) ctx.fail("kernel_shape does not match X's spatial rank");
  const nn::Window w = nn::slidingWindow(ctx, planes.spatial, kernel, ctx.node().attrInt("ceil_mode", 0) != 0);
  std::vector<Tensor> out;
  // MaxPool also takes 8-bit integers (opset 12); the averaging pools are float-only.
  if constexpr (K == Pool::Max)
    if (x.dtype() == DType::Int8 || x.dtype() == DType::UInt8)
      dispatch<kInts>(x.dtype(),
                      [&](auto tag) { out = poolTyped<K, typename decltype(tag)::type>(ctx, x, planes, w); });
  const bool indices = K == Pool::Max && ctx.node().numOutputs() > 1;
  if (K != Pool::Lp && w.rank() == 2 && !indices) {
    dispatch<kFloats>(x.dtype(), [&](auto tag) { out = {pool2d<K, typename decltype(tag)::type>(ctx, x, planes, w)}; });
    return out;
  }
  dispatch<kFloats>(x.dtype(), [&](auto tag) { out = poolTyped<K, typename decltype(tag)::type>(ctx, x, planes, w); });
  return out;
}

// Global pools: one window covering every spatial axis, output [N, C, 1, ...].
template <Pool K>
std::vector<Tensor> globalPool(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  const Planes planes = planesOf(ctx, x, 2);
  std::vector<Tensor> out;
  dispatch<kFloats>(x.dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    std::vector<int64_t> outDims(x.dims().size(), 1);
    outDims[0] = x.dims()[0];
    outDims[1] = x.dims()[1];
    OutBuffer y(ctx, x.dtype(), outDims);
    const int64_t n = *checkedProduct(planes.spatial);
    const double p = K == Pool::Lp ? lpNorm(ctx) : 2.0;
    const uint8_t* px = x.data();  // (a virtual call: once, not per element)
    for (int64_t plane = 0; plane < planes.count; ++plane) {
      double acc = K == Pool::Max ? -std::numeric_limits<double>::infinity() : 0.0;
      for (int64_t i = 0; i < n; ++i) {
        const double v = static_cast<double>(Elem<S>::load(px, plane * n + i));
        if constexpr (K == Pool::Max) acc = std::max(acc, v);
        if constexpr (K == Pool::Average) acc += v;
        if constexpr (K == Pool::Lp) acc += std::pow(std::fabs(v), p);
      }
      if constexpr (K == Pool::Average) acc /= static_cast<double>(n);  // NaN for no spatial elements
      if constexpr (K == Pool::Lp) acc = std::pow(acc, 1.0 / p);
      Elem<S>::store(y.data(), plane, static_cast<ComputeOf<S>>(acc));
    }
    out.push_back(y.finish());
  });
  return out;
}

}  // namespace

void registerPoolKernels(KernelRegistry& r) {
  r.add("MaxPool", pool<Pool::Max>);
  r.add("AveragePool", pool<Pool::Average>);
  r.add("LpPool", pool<Pool::Lp>);
  r.add("GlobalMaxPool", globalPool<Pool::Max>);
  r.add("GlobalAveragePool", globalPool<Pool::Average>);
  r.add("GlobalLpPool", globalPool<Pool::Lp>);
}

}  // namespace kiln::kernels
