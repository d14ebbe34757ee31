#pragma once
// Internal to kernels/: the numeric cores of the NN families (convolution, matrix product, softmax) and the
// sliding-window geometry Conv and the pools share, so Kiln's fused NN ops (fused_nn_ops.cpp) evaluate exactly the
// arithmetic of the ONNX ops they replaced. Floating types compute in a working precision W: double for fp64, float
// for fp32/fp16/bf16 (16-bit results round once, on store).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>
#include <utility>
#include <span>
#include <vector>

#include "kernels/kernel_util.h"
#include "kernels/vector_math.h"

namespace kiln::kernels::nn {

template <typename S>
using Work = std::conditional_t<std::is_same_v<S, double>, double, float>;

// Convolutions (Conv and kiln:FusedConv) compute fp32 in float, through OpenBLAS's sgemm, as ONNX Runtime does.
// They used to accumulate in double so that identical filters could never round an ulp apart by where their rows
// land in the BLAS micro-kernel. With the AVX2 / AVX-512 kernels (openblas.cpp names them) the light_* models, whose
// filters are all equal, still match their expected outputs exactly (test_corpus checks them), and the double path
// cost the reference run three times its time (two thirds of ResNet-50's run went to dgemm and
// to widening every weight and activation to double).
template <typename S>
using ConvWork = std::conditional_t<std::is_same_v<S, double>, double, float>;

// The elements of `t` (stored as S) in working precision W; the copy is checked like any scratch buffer.
template <typename S, typename W = Work<S>>
std::vector<W> loadAll(const KernelContext& ctx, const Tensor& t) {
  checkScratch(ctx, t.numel(), sizeof(W));
  std::vector<W> v(static_cast<size_t>(t.numel()));
  const uint8_t* p = t.data();  // (a virtual call: once, not per element)
  if constexpr (std::is_same_v<S, W>) {
    if (t.numel() > 0) std::memcpy(v.data(), p, static_cast<size_t>(t.numel()) * sizeof(W));
  } else if constexpr (std::is_same_v<S, Half> && std::is_same_v<W, float>) {
    if (reinterpret_cast<uintptr_t>(p) % alignof(uint16_t) == 0)  // a compiled run's fp16 operand: bulk, F16C
      halvesToFloats(reinterpret_cast<const uint16_t*>(p), v.data(), v.size());
    else
      for (int64_t i = 0; i < t.numel(); ++i) v[static_cast<size_t>(i)] = static_cast<W>(Elem<S>::load(p, i));
  } else {
    for (int64_t i = 0; i < t.numel(); ++i) v[static_cast<size_t>(i)] = static_cast<W>(Elem<S>::load(p, i));
  }
  return v;
}

// An operand in working precision W: the tensor's own elements when it already holds W at an aligned address (an
// fp32 weight or activation: no copy), else a converted copy (fp16 / bf16 widened, a weight at an odd offset in a
// mapped file).
template <typename S, typename W = Work<S>>
class Operand {
 public:
  Operand(const KernelContext& ctx, const Tensor& t) {
    if constexpr (std::is_same_v<S, W>) {
      if (reinterpret_cast<uintptr_t>(t.data()) % alignof(W) == 0) {
        ptr_ = reinterpret_cast<const W*>(t.data());
        return;
      }
    }
    copy_ = loadAll<S, W>(ctx, t);
    ptr_ = copy_.data();
  }
  const W* data() const { return ptr_; }

 private:
  std::vector<W> copy_;
  const W* ptr_ = nullptr;
};

// A kernel's result computed in W: straight into the output tensor when S is W (no scratch, no copy, no zeroing:
// the kernel writes every element), else into a scratch rounded into S once at the end. Sized (and checked against
// the output limit) before any work.
template <typename S, typename W = Work<S>>
class Result {
 public:
  Result(const KernelContext& ctx, DType type, std::vector<int64_t> dims) : ctx_(ctx), dims_(dims) {
    if constexpr (std::is_same_v<S, W>) {
      out_.emplace(ctx, type, std::move(dims), HeapStorage::Start::Unset);
      ptr_ = reinterpret_cast<W*>(out_->data());
      numel_ = out_->numel();
    } else {
      OutBuffer probe(ctx, type, dims);  // the size check, before the scratch
      numel_ = probe.numel();
      checkScratch(ctx, numel_, sizeof(W));
      scratch_.resize(static_cast<size_t>(numel_));
      ptr_ = scratch_.data();
    }
  }
  W* data() { return ptr_; }
  int64_t numel() const { return numel_; }
  W* begin() { return ptr_; }
  W* end() { return ptr_ + numel_; }
  Tensor finish();

 private:
  const KernelContext& ctx_;
  std::vector<int64_t> dims_;
  std::optional<OutBuffer> out_;
  std::vector<W> scratch_;
  W* ptr_ = nullptr;
  int64_t numel_ = 0;
};

// A tensor of S with `dims` holding v (one rounding per element for the 16-bit types).
template <typename S, typename W>
Tensor storeAll(const KernelContext& ctx, std::vector<int64_t> dims, const std::vector<W>& v) {
  OutBuffer out(ctx, dtypeOf<S>(), std::move(dims), HeapStorage::Start::Unset);  // every element is written
  uint8_t* p = out.data();
  if constexpr (std::is_same_v<S, Half> && std::is_same_v<W, float>) {  // rounded as Elem<Half>::store rounds
    floatsToHalves(v.data(), reinterpret_cast<uint16_t*>(p), static_cast<size_t>(out.numel()));
  } else {
    for (int64_t i = 0; i < out.numel(); ++i) Elem<S>::store(p, i, static_cast<ComputeOf<S>>(v[static_cast<size_t>(i)]));
  }
  return out.finish();
}

template <typename S, typename W>
Tensor Result<S, W>::finish() {
  if constexpr (std::is_same_v<S, W>) return out_->finish();
  else return storeAll<S>(ctx_, dims_, scratch_);
}

// v as an op that stores S would leave it: a fused op rounds where the unfused sequence stored an intermediate.
template <typename S, typename W>
W roundAs(W v) {
  if constexpr (std::is_same_v<S, Half> || std::is_same_v<S, BFloat>) {
    uint8_t bits[2];
    Elem<S>::store(bits, 0, static_cast<float>(v));
    return static_cast<W>(Elem<S>::load(bits, 0));
  } else if constexpr (std::is_same_v<S, float> && std::is_same_v<W, double>) {
    return static_cast<double>(static_cast<float>(v));  // fp32 computed in double (ConvWork)
  } else {
    return v;
  }
}

// roundAs over n values. fp16 goes in bulk (F16C where the CPU has it; the same bits as one at a time): a compiled
// fp16 run rounds every convolution output so, and one software conversion each way per element took a third of it.
template <typename S, typename W>
void roundAllAs(W* v, int64_t n) {
  if constexpr (std::is_same_v<S, Half> && std::is_same_v<W, float>) {
    constexpr int64_t kChunk = 1024;
    uint16_t halves[kChunk];
    for (int64_t i = 0; i < n; i += kChunk) {
      const auto m = static_cast<size_t>(std::min(kChunk, n - i));
      floatsToHalves(v + i, halves, m);
      halvesToFloats(halves, v + i, m);
    }
  } else if constexpr (std::is_same_v<S, BFloat> || (std::is_same_v<S, float> && std::is_same_v<W, double>)) {
    for (int64_t i = 0; i < n; ++i) v[i] = roundAs<S>(v[i]);
  }  // otherwise W is S: nothing to round
}

// Row-major C[m,n] = alpha * op(A) @ op(B) + beta * C with dense rows (op(A) is m×k, op(B) k×n).
// Whether gemm computes the plain fp32 product C = A·B (alpha 1, beta 0) of these extents with the tiled kernel
// (kernels/sgemm_tiles.h): callers that feed the kernel their own operand source then get gemm's bits.
bool plainProductIsTiled(int64_t m, int64_t n, int64_t k);
void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha, const float* a, const float* b,
          float beta, float* c);
void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, double alpha, const double* a, const double* b,
          double beta, double* c);

// Sliding-window geometry per spatial axis (Conv, pools): strides, dilations, pads and auto_pad read from the node
// and validated; out is the output extent.
struct Window {
  std::vector<int64_t> in, kernel, stride, dilation, padBegin, padEnd, out;
  size_t rank() const { return in.size(); }
};
// ceilMode: the pools' ceil_mode (a last window starting inside the input or its begin padding counts).
Window slidingWindow(const KernelContext& ctx, const std::vector<int64_t>& in, const std::vector<int64_t>& kernel,
                     bool ceilMode);

// Conv(X, W[, B]) with ONNX semantics: shapes, attributes and group validated from the node.
struct ConvShape {
  int64_t batch = 0, inChannels = 0, outChannels = 0, group = 1;
  Window window;
  std::vector<int64_t> outDims;  // [N, M, out...]
};
ConvShape convShape(const KernelContext& ctx, const std::vector<int64_t>& x, const std::vector<int64_t>& w,
                    const Tensor* bias);

// Element-wise steps that act on a convolution's output one channel at a time (an inference BatchNormalization, a
// per-channel Mul or Add, Relu, Clip), applied to each band of output while it is still in cache instead of as
// passes of their own over the whole tensor (kernels/conv_followers.h). Each step is the same arithmetic, in the
// same type and order, as its op's kernel, so a chain gives the bits the ops give run one after another.
struct ChannelStep {
  enum class Kind { Add, Mul, Affine, Clamp };
  Kind kind = Kind::Add;
  // One value per channel, or one for all. Add: x + a; Mul: x · a; Affine: x · a + b; Clamp: min(max(x, a), b).
  std::vector<double> a, b;
};
using ChannelSteps = std::vector<ChannelStep>;

// BatchNormalization's inference map y = x·k + shift: k and shift found in double, applied in the tensor's type.
inline std::pair<double, double> batchNormAffine(double scale, double bias, double mean, double var, double epsilon) {
  const double k = scale / std::sqrt(var + epsilon);
  return {k, bias - mean * k};
}
template <typename W>
void affineRow(const W* x, W* y, int64_t n, W k, W shift) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * k + shift;
}
// acc + a·b for the depthwise convolutions (NCHW and blocked alike): one rounding where the build has FMA, as the
// explicit AVX-512 rows compute it, else two. Written out rather than left to the compiler, which fuses `acc += a * b`
// at -O2 but not at -O1 (the sanitizer build), so that the kernels agree bit for bit in every build. Internal linkage:
// only the kernels, built for the machine's CPU, use it.
template <typename W>
static inline W multiplyAdd(W a, W b, W acc) {
#if defined(__FMA__)
  return std::fma(a, b, acc);
#else
  return acc + a * b;
#endif
}
// Clip's and Relu's comparison order: NaN passes through; lo > hi gives hi everywhere.
template <typename W>
W clampValue(W v, W lo, W hi) {
  const W r = v < lo ? lo : v;
  return r > hi ? hi : r;
}
template <typename W>
void applyChannelSteps(const ChannelSteps& steps, int64_t channel, W* y, int64_t n) {
  const auto at = [channel](const std::vector<double>& v) {
    return static_cast<W>(v.size() == 1 ? v[0] : v[static_cast<size_t>(channel)]);
  };
  for (const ChannelStep& s : steps) {
    const W a = at(s.a);
    switch (s.kind) {
      case ChannelStep::Kind::Add:
        for (int64_t i = 0; i < n; ++i) y[i] = y[i] + a;
        break;
      case ChannelStep::Kind::Mul:
        for (int64_t i = 0; i < n; ++i) y[i] = y[i] * a;
        break;
      case ChannelStep::Kind::Affine:
        affineRow(y, y, n, a, at(s.b));
        break;
      case ChannelStep::Kind::Clamp: {
        const W hi = at(s.b);
        for (int64_t i = 0; i < n; ++i) y[i] = clampValue(y[i], a, hi);
        break;
      }
    }
  }
}

// y (outDims, zero-filled or not) = conv(x, w) + bias (null: none), then `steps` (null: none) on each channel.
void convolve(const KernelContext& ctx, const ConvShape& s, const float* x, const float* w, const float* bias,
              float* y, const ChannelSteps* steps = nullptr);
void convolve(const KernelContext& ctx, const ConvShape& s, const double* x, const double* w, const double* bias,
              double* y, const ChannelSteps* steps = nullptr);
// Conv of fp32 activations stored NC1HWC0 with C0 = 16 (x: [N, ⌈C/16⌉, H, W, 16]) into y stored the same way
// ([N, ⌈M/16⌉, outH, outW, 16], spare lanes written as zeros); w and bias as for convolve. For 2-D convolutions of
// group 1 and depthwise ones (conv_nc1hwc0.cpp); false, writing nothing, for others.
// `workspace`: scratch for its im2col band and product when it holds blockedConvWorkspace floats (else allocated).
bool convolveNc1hwc0(const KernelContext& ctx, const ConvShape& s, const float* x, const float* w, const float* bias,
                     float* y, std::span<float> workspace = {});
// The direct form of convolveNc1hwc0 for group 1 (conv_nc1hwc0_direct.cpp), for output planes with more positions
// than channels (planeWorthDirect) at column stride 1 or 2; false, writing nothing, otherwise (or without AVX-512).
bool planeWorthDirect(const ConvShape& s);
bool convolveNc1hwc0Direct(const ConvShape& s, const float* x, const float* w, const float* bias, float* y);
// The scratch, in floats, convolveNc1hwc0 takes for a group-1 convolution of inChannels × taps (kernel elements)
// into outChannels × [outH, outW]: one band's im2col and its product; 0 when the extents overflow. The compiled mode
// allocates it with its arena before the first node (GE plans each op's workspace in the model's memory), so the
// convolutions do not fault fresh pages in mid-run.
int64_t blockedConvWorkspace(int64_t inChannels, int64_t taps, int64_t outChannels, int64_t outH, int64_t outW);
// The im2col buffer is built for a band of output lines at a time, at most this many bytes (but one line at least):
// memory stays bounded for large images (fns-candy's 9×9 convolutions would need gigabytes at once) and the band
// stays in cache while the GEMM reads it.
constexpr int64_t kColumnBandBytes = int64_t(32) << 20;
// Output columns [lo, hi) of a row of outWidth whose input column o·stride + offset lies in [0, width): the span a
// kernel tap reads without padding.
std::pair<int64_t, int64_t> insideColumns(int64_t offset, int64_t stride, int64_t width, int64_t outWidth);
// A 2-D window's input plane copied into a larger one with the padding written out (zeros for a convolution, -inf
// for MaxPool), so every tap of every output lies in memory: the extents as far as the padding, or the last
// output's taps, reach; `worthIt` false when the padding is out of proportion to the image (the copy would be far
// larger than the input) and the caller should test taps instead (conv_depthwise.cpp).
struct PaddedPlane {
  int64_t height = 0, width = 0;
  bool worthIt = false;
};
PaddedPlane paddedPlane(const Window& w);
// a[t] = in[2t] and b[t] = in[2t + 1] for the n elements of in (conv_depthwise.cpp).
void deinterleave(const float* in, int64_t n, float* a, float* b);
void deinterleave(const double* in, int64_t n, double* a, double* b);
// The input plane x (w.in[0] × w.in[1]) copied into `out` (p.height × p.width) at the window's top-left padding,
// the rest `fill`. With `splitColumns` each row is stored as its even columns (the first (p.width + 1) / 2) then
// its odd ones: a window at column stride 2 then reads each tap's columns as one contiguous run.
template <typename T>
void copyIntoPadded(const Window& w, const PaddedPlane& p, const T* x, T fill, std::vector<T>& out,
                    bool splitColumns = false) {
  out.resize(static_cast<size_t>(p.height * p.width));
  T* o = out.data();
  const int64_t top = w.padBegin[0], left = w.padBegin[1], inH = w.in[0], inW = w.in[1], pw = p.width;
  std::fill_n(o, top * pw, fill);
  std::fill(o + (top + inH) * pw, o + p.height * pw, fill);
  const int64_t evens = (pw + 1) / 2, firstEven = left % 2;  // input column i sits at padded column left + i
  const auto at = [evens](int64_t c) { return c % 2 == 0 ? c / 2 : evens + c / 2; };
  for (int64_t ih = 0; ih < inH; ++ih) {
    T* row = o + (top + ih) * pw;
    const T* in = x + ih * inW;
    if (!splitColumns) {
      std::fill_n(row, left, fill);
      std::copy_n(in, inW, row + left);
      std::fill(row + left + inW, row + pw, fill);
      continue;
    }
    for (int64_t c = 0; c < left; ++c) row[at(c)] = fill;
    for (int64_t c = left + inW; c < pw; ++c) row[at(c)] = fill;
    T* even = row + (left + firstEven) / 2;
    T* odd = row + evens + (left + 1 - firstEven) / 2;
    if (firstEven == 0)
      deinterleave(in, inW, even, odd);
    else
      deinterleave(in, inW, odd, even);
  }
}
// y = conv(x, w) + bias for a 2-D depthwise convolution (one input channel per group, any channel multiplier), computed directly
// (conv_depthwise.cpp); false, writing nothing, for any other convolution.
bool convolveDepthwise2d(const ConvShape& s, const float* x, const float* w, const float* bias, float* y,
                         const ChannelSteps* steps);
bool convolveDepthwise2d(const ConvShape& s, const double* x, const double* w, const double* bias, double* y,
                         const ChannelSteps* steps);

// numpy matmul of A and B (1-D operands promoted and the added axis dropped), op = transpose of the last two axes.
struct MatMulPlan {
  std::vector<int64_t> outDims;
  int64_t m = 0, n = 0, k = 0;
  bool transA = false, transB = false;
  std::vector<int64_t> aOffsets, bOffsets;  // per output matrix: element offset of its A and B matrices
};
MatMulPlan matMulPlan(const KernelContext& ctx, const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                      bool transA, bool transB);
// y (outDims) = alpha * op(A) @ op(B) for every batch.
void matMul(const MatMulPlan& p, float alpha, const float* a, const float* b, float* y);
void matMul(const MatMulPlan& p, double alpha, const double* a, const double* b, double* y);
// Integer products without BLAS: acc += a * b wrapping in T (as the device's integer units do), for every batch.
// loadA(i) / loadB(i) read flat element i; store(i, acc) writes flat output element i.
template <typename T, typename LoadA, typename LoadB, typename Store>
void wrappingMatMul(const MatMulPlan& p, LoadA loadA, LoadB loadB, Store store) {
  for (size_t bi = 0; bi < p.aOffsets.size(); ++bi) {
    const int64_t base = static_cast<int64_t>(bi) * p.m * p.n;
    for (int64_t i = 0; i < p.m; ++i)
      for (int64_t j = 0; j < p.n; ++j) {
        T acc = 0;
        for (int64_t q = 0; q < p.k; ++q)
          acc = wrapAdd(acc, wrapMul(loadA(p.aOffsets[bi] + i * p.k + q), loadB(p.bOffsets[bi] + q * p.n + j)));
        store(base + i * p.n + j, acc);
      }
  }
}

enum class SoftmaxKind { Softmax, LogSoftmax, Hardmax };

inline void expInPlace(float* x, size_t n) { expFloats(x, x, n); }
inline void expInPlace(double* x, size_t n) {
  for (size_t i = 0; i < n; ++i) x[i] = std::exp(x[i]);
}

// The largest element of a contiguous row, in 16 lanes the compiler vectorises; a NaN is passed over, as by
// std::max(mx, x) in turn (the maximum is exact whichever lane meets an element).
template <typename W>
W rowMax(const W* row, int64_t n) {
  constexpr int kLanes = 16;
  W lane[kLanes];
  std::fill_n(lane, kLanes, -std::numeric_limits<W>::infinity());
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int k = 0; k < kLanes; ++k) lane[k] = row[i + k] > lane[k] ? row[i + k] : lane[k];
  W mx = -std::numeric_limits<W>::infinity();
  for (; i < n; ++i) mx = row[i] > mx ? row[i] : mx;
  for (int k = 0; k < kLanes; ++k) mx = lane[k] > mx ? lane[k] : mx;
  return mx;
}

// The sum of a contiguous row in double, over 8 lanes (vectorised) added pairwise at the end: an order other than
// element by element, which moves the double sum by ulps of double, far below the float results it divides.
template <typename W>
double rowSum(const W* row, int64_t n) {
  constexpr int kLanes = 8;
  double lane[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int k = 0; k < kLanes; ++k) lane[k] += static_cast<double>(row[i + k]);
  for (; i < n; ++i) lane[0] += static_cast<double>(row[i]);
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

// Normalises in place each of outer × inner rows of n elements lying `inner` apart (one softmax axis of extent n
// with `inner` elements after it; inner = 1 for a flattened trailing block).
template <typename W>
void softmaxRows(W* data, int64_t outer, int64_t n, int64_t inner, SoftmaxKind kind) {
  if (outer == 0 || n == 0 || inner == 0) return;
  if (kind == SoftmaxKind::Softmax && inner == 1) {
    // Contiguous rows: each shifted by its maximum, then the exponentials of all of them in one vector loop (an
    // attention's rows are often shorter than a vector), then each row's double sum, and each element times the sum's
    // reciprocal in double (a double division per element was as slow as the exponentials; the product is within
    // an ulp of double of the quotient, so the float result is the same but where that ulp straddles a rounding tie).
    for (int64_t o = 0; o < outer; ++o) {
      W* row = data + o * n;
      const W mx = rowMax(row, n);
      for (int64_t i = 0; i < n; ++i) row[i] -= mx;
    }
    expInPlace(data, static_cast<size_t>(outer * n));
    for (int64_t o = 0; o < outer; ++o) {
      W* row = data + o * n;
      const double inv = 1.0 / rowSum(row, n);
      for (int64_t i = 0; i < n; ++i) row[i] = static_cast<W>(static_cast<double>(row[i]) * inv);
    }
    return;
  }
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j) {
      W* row = data + o * n * inner + j;
      const auto at = [&](int64_t i) -> W& { return row[i * inner]; };
      if (kind == SoftmaxKind::Hardmax) {
        int64_t best = 0;  // the first maximum wins, as in ONNX's reference
        for (int64_t i = 1; i < n; ++i)
          if (at(i) > at(best)) best = i;
        for (int64_t i = 0; i < n; ++i) at(i) = i == best ? W(1) : W(0);
        continue;
      }
      // Subtracting the maximum keeps exp finite for large inputs; the sum accumulates in double. Each exponential
      // is taken once, in W (float's exp is within an ulp; double's cost an attention layer's Softmax 5 times
      // as much), and kept in place for the division.
      W mx = -std::numeric_limits<W>::infinity();
      if (inner == 1)
        mx = rowMax(row, n);
      else
        for (int64_t i = 0; i < n; ++i) mx = std::max(mx, at(i));
      double sum = 0;
      if (kind == SoftmaxKind::LogSoftmax) {
        for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(std::exp(at(i) - mx));
        const double logSum = std::log(sum);
        for (int64_t i = 0; i < n; ++i) at(i) = static_cast<W>(static_cast<double>(at(i) - mx) - logSum);
      } else {
        for (int64_t i = 0; i < n; ++i) {
          at(i) = std::exp(at(i) - mx);
          sum += static_cast<double>(at(i));
        }
        for (int64_t i = 0; i < n; ++i) at(i) = static_cast<W>(static_cast<double>(at(i)) / sum);
      }
    }
}

}  // namespace kiln::kernels::nn
