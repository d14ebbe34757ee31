#pragma once
// Shared by the kernel families (internal to kernels/): element access per dtype, output allocation with
// size checks, numpy broadcasting, axis and attribute helpers.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/kernel.h"
#include "ir/dtype.h"

namespace kiln::kernels {

// Storage tags of the 16-bit float formats: stored as bits, computed in float.
struct Half {
  uint16_t bits;
};
struct BFloat {
  uint16_t bits;
};

// Elem<S>: reads and writes elements stored as S; C is the type arithmetic happens in.
template <typename S>
struct Elem {
  using C = S;
  static C load(const uint8_t* p, int64_t i) {
    S v;
    std::memcpy(&v, p + static_cast<size_t>(i) * sizeof(S), sizeof(S));
    return v;
  }
  static void store(uint8_t* p, int64_t i, C v) { std::memcpy(p + static_cast<size_t>(i) * sizeof(S), &v, sizeof(S)); }
};
template <>
struct Elem<bool> {  // one byte, any non-zero byte reads as true
  using C = bool;
  static C load(const uint8_t* p, int64_t i) { return p[i] != 0; }
  static void store(uint8_t* p, int64_t i, C v) { p[i] = v ? 1 : 0; }
};
template <>
struct Elem<Half> {
  using C = float;
  static C load(const uint8_t* p, int64_t i) { return halfToFloat(Elem<uint16_t>::load(p, i)); }
  static void store(uint8_t* p, int64_t i, C v) { Elem<uint16_t>::store(p, i, floatToHalf(v)); }
};
template <>
struct Elem<BFloat> {
  using C = float;
  static C load(const uint8_t* p, int64_t i) { return bfloat16ToFloat(Elem<uint16_t>::load(p, i)); }
  static void store(uint8_t* p, int64_t i, C v) { Elem<uint16_t>::store(p, i, floatToBfloat16(v)); }
};

template <typename S>
using ComputeOf = typename Elem<S>::C;

template <typename S>
inline constexpr bool kIsFloat = std::is_floating_point_v<S> || std::is_same_v<S, Half> || std::is_same_v<S, BFloat>;
template <typename S>
inline constexpr bool kIsInt = std::is_integral_v<S> && !std::is_same_v<S, bool>;

template <typename S>
struct Tag {
  using type = S;
};

// Element type sets a kernel accepts.
enum TypeSet : unsigned {
  kFloats = 1,
  kSigned = 2,
  kUnsigned = 4,
  kBool = 8,
  kInts = kSigned | kUnsigned,
  kNumeric = kFloats | kInts,
  kAll = kNumeric | kBool,
};

// Calls f(Tag<S>{}) with the storage type S of `t` when t is in Set; returns false (f not called) otherwise.
// Only the types in Set are instantiated.
template <unsigned Set, typename F>
bool dispatch(DType t, F&& f) {
  switch (t) {
#define KILN_CASE(dt, S, set)           \
  case DType::dt:                       \
    if constexpr ((Set & (set)) != 0) { \
      f(Tag<S>{});                      \
      return true;                      \
    }                                   \
    break;
    KILN_CASE(Float, float, kFloats)
    KILN_CASE(Double, double, kFloats)
    KILN_CASE(Float16, Half, kFloats)
    KILN_CASE(BFloat16, BFloat, kFloats)
    KILN_CASE(Int8, int8_t, kSigned)
    KILN_CASE(Int16, int16_t, kSigned)
    KILN_CASE(Int32, int32_t, kSigned)
    KILN_CASE(Int64, int64_t, kSigned)
    KILN_CASE(UInt8, uint8_t, kUnsigned)
    KILN_CASE(UInt16, uint16_t, kUnsigned)
    KILN_CASE(UInt32, uint32_t, kUnsigned)
    KILN_CASE(UInt64, uint64_t, kUnsigned)
    KILN_CASE(Bool, bool, kBool)
#undef KILN_CASE
    default:
      break;
  }
  return false;
}

template <typename S>
constexpr DType dtypeOf() {
  if constexpr (std::is_same_v<S, float>)
    return DType::Float;
  else if constexpr (std::is_same_v<S, double>)
    return DType::Double;
  else if constexpr (std::is_same_v<S, Half>)
    return DType::Float16;
  else if constexpr (std::is_same_v<S, BFloat>)
    return DType::BFloat16;
  else if constexpr (std::is_same_v<S, bool>)
    return DType::Bool;
  else if constexpr (std::is_same_v<S, int8_t>)
    return DType::Int8;
  else if constexpr (std::is_same_v<S, int16_t>)
    return DType::Int16;
  else if constexpr (std::is_same_v<S, int32_t>)
    return DType::Int32;
  else if constexpr (std::is_same_v<S, int64_t>)
    return DType::Int64;
  else if constexpr (std::is_same_v<S, uint8_t>)
    return DType::UInt8;
  else if constexpr (std::is_same_v<S, uint16_t>)
    return DType::UInt16;
  else if constexpr (std::is_same_v<S, uint32_t>)
    return DType::UInt32;
  else
    return DType::UInt64;
}

// Integer arithmetic wraps (two's complement) instead of being undefined on overflow, as on the device.
template <typename T>
T wrapAdd(T a, T b) {
  if constexpr (kIsInt<T>)
    return static_cast<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  else
    return a + b;
}
template <typename T>
T wrapSub(T a, T b) {
  if constexpr (kIsInt<T>)
    return static_cast<T>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
  else
    return a - b;
}
template <typename T>
T wrapMul(T a, T b) {
  if constexpr (kIsInt<T>)
    return static_cast<T>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  else
    return a * b;
}

// Float to integer without undefined behaviour: NaN becomes 0, out-of-range values saturate, the rest truncate.
template <typename T>
T floatToInt(double v) {
  if (v != v) return 0;
  if (v <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
  if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

// The bytes of one element of type t holding v (floats round, integers saturate as in floatToInt, bool is v != 0):
// fill values given as float attributes (Pad's value, Resize's extrapolation_value).
inline std::vector<uint8_t> elementBytes(DType t, double v) {
  std::vector<uint8_t> bytes(static_cast<size_t>(std::max<int64_t>(dtypeSize(t), 0)), 0);
  dispatch<kAll>(t, [&](auto tag) {
    using S = typename decltype(tag)::type;
    if constexpr (kIsInt<S>)
      Elem<S>::store(bytes.data(), 0, floatToInt<S>(v));
    else if constexpr (std::is_same_v<S, bool>)
      Elem<S>::store(bytes.data(), 0, v != 0);
    else
      Elem<S>::store(bytes.data(), 0, static_cast<ComputeOf<S>>(v));
  });
  return bytes;
}


class OutBuffer {
 public:
  // Zeroed unless the kernel sets every element itself (HeapStorage::Start::Unset).
  OutBuffer(const KernelContext& ctx, DType dtype, std::vector<int64_t> dims,
            HeapStorage::Start start = HeapStorage::Start::Zeroed);
  uint8_t* data() { return storage_->data(); }
  int64_t numel() const { return numel_; }
  const std::vector<int64_t>& dims() const { return dims_; }
  Tensor finish() { return Tensor(dtype_, std::move(dims_), std::move(storage_)); }

 private:
  DType dtype_;
  std::vector<int64_t> dims_;
  int64_t numel_ = 0;
  std::shared_ptr<HeapStorage> storage_;
};

// Checks a kernel's scratch buffer (elements of elementBytes each) against the same limit as its outputs.
void checkScratch(const KernelContext& ctx, int64_t elements, int64_t elementBytes);

// Same elements under new dims, sharing the source's storage (Reshape, Squeeze, Identity cost no copy).
Tensor viewAs(const Tensor& t, std::vector<int64_t> dims);

std::vector<int64_t> stridesOf(const std::vector<int64_t>& dims);

// numpy (multidirectional) broadcast of the shapes; fails on incompatible extents.
std::vector<int64_t> broadcastShapes(const KernelContext& ctx, const std::vector<const std::vector<int64_t>*>& shapes);

// Walks an index space (dims) in row-major order, tracking for each operand the element offset
// base + sum(index[d] * strides[d]). Strides may be 0 (broadcast) or negative (reversed slices).
class StrideWalker {
 public:
  StrideWalker(std::vector<int64_t> dims, std::vector<std::vector<int64_t>> strides, std::vector<int64_t> bases = {});
  int64_t offset(size_t operand) const { return offsets_[operand]; }
  void next();

 private:
  std::vector<int64_t> dims_, index_, offsets_;
  std::vector<std::vector<int64_t>> strides_;
  bool flat_ = true;  // every operand is contiguous over dims: offsets just advance by one
};

// Element strides of `in` seen through a broadcast to `out` (aligned to out's rank, 0 where broadcast).
std::vector<int64_t> broadcastStrides(const std::vector<int64_t>& out, const std::vector<int64_t>& in);

// Walks the elements of a broadcast output, tracking each input's element offset.
class BroadcastWalker : public StrideWalker {
 public:
  BroadcastWalker(const std::vector<int64_t>& outDims, const std::vector<const std::vector<int64_t>*>& inDims);
};

// out[i] = in[walker offset] for every element of out, walking `dims` with `strides` from `base` (Slice, Transpose,
// Expand, Tile are all such walks over the input).
void stridedCopy(OutBuffer& out, const Tensor& in, const std::vector<int64_t>& dims,
                 const std::vector<int64_t>& strides, int64_t base = 0);

// Axis in [-rank, rank-1] made non-negative; fails otherwise.
int64_t normalizeAxis(const KernelContext& ctx, int64_t axis, int64_t rank, const char* what);
// Values of an integer tensor (shape inputs, axes, indices); fails for any other element type.
std::vector<int64_t> intValues(const KernelContext& ctx, const Tensor& t, const char* what);
bool hasAttr(const Node& node, const char* name);

// Copies one element of `size` bytes (1, 2, 4 or 8 in practice).
inline void copyElement(uint8_t* dst, const uint8_t* src, size_t size) {
  switch (size) {
    case 1:
      *dst = *src;
      break;
    case 2:
      std::memcpy(dst, src, 2);
      break;
    case 4:
      std::memcpy(dst, src, 4);
      break;
    case 8:
      std::memcpy(dst, src, 8);
      break;
    default:
      std::memcpy(dst, src, size);
      break;
  }
}

// fp16 element-wise work goes through float in chunks of this many elements, widened and rounded in bulk (F16C where
// the CPU has it; the same bits as Elem<Half> one at a time): a compiled fp16 run's Mul, Add and Relu spent most of
// their time in the scalar conversions.
inline constexpr int64_t kHalfChunk = 256;
// n halves from p (at element `at`, `step` apart: 1, or 0 for one broadcast value) as floats in `out`.
inline void widenHalves(const uint8_t* p, int64_t at, int64_t step, int64_t n, float* out) {
  if (step == 1 && reinterpret_cast<uintptr_t>(p) % alignof(uint16_t) == 0) {
    halvesToFloats(reinterpret_cast<const uint16_t*>(p) + at, out, static_cast<size_t>(n));
    return;
  }
  for (int64_t j = 0; j < n; ++j) out[j] = Elem<Half>::load(p, at + j * step);
}
inline void narrowToHalves(const float* in, int64_t n, uint8_t* p, int64_t at) {
  if (reinterpret_cast<uintptr_t>(p) % alignof(uint16_t) == 0) {
    floatsToHalves(in, reinterpret_cast<uint16_t*>(p) + at, static_cast<size_t>(n));
    return;
  }
  for (int64_t j = 0; j < n; ++j) Elem<Half>::store(p, at + j, in[j]);
}

// out[i] = fn(x[i]) with x read as SIn and the result written as SOut.
template <typename SIn, typename SOut, typename Fn>
Tensor mapUnary(const KernelContext& ctx, const Tensor& x, Fn&& fn) {
  OutBuffer out(ctx, dtypeOf<SOut>(), x.dims(), HeapStorage::Start::Unset);  // every element is written
  const uint8_t* p = x.data();
  uint8_t* po = out.data();  // (virtual calls: once, not per element)
  const int64_t n = out.numel();
  if constexpr (std::is_same_v<SIn, Half> && std::is_same_v<SOut, Half>) {
    float v[kHalfChunk];
    for (int64_t i = 0; i < n; i += kHalfChunk) {
      const int64_t m = std::min(kHalfChunk, n - i);
      widenHalves(p, i, 1, m, v);
      for (int64_t j = 0; j < m; ++j) v[j] = fn(v[j]);
      narrowToHalves(v, m, po, i);
    }
    return out.finish();
  }
  for (int64_t i = 0; i < n; ++i) Elem<SOut>::store(po, i, fn(Elem<SIn>::load(p, i)));
  return out.finish();
}

// out[i] = fn(a[ia], b[ib]) over the numpy broadcast of a and b.
template <typename SA, typename SB, typename SOut, typename Fn>
Tensor mapBinary(const KernelContext& ctx, const Tensor& a, const Tensor& b, Fn&& fn) {
  OutBuffer out(ctx, dtypeOf<SOut>(), a.dims() == b.dims() ? a.dims() : broadcastShapes(ctx, {&a.dims(), &b.dims()}),
                HeapStorage::Start::Unset);
  const uint8_t* pa = a.data();
  const uint8_t* pb = b.data();
  uint8_t* po = out.data();
  const int64_t total = out.numel();
  if (total == 0) return out.finish();
  // `inner` elements of the output from `base`, each operand advancing by a constant stride (1, or 0 where it is
  // broadcast: a bias, a scalar) from its offset — a plain loop the compiler vectorises.
  const auto span = [&](int64_t base, int64_t inner, int64_t oa, int64_t ob, int64_t ia, int64_t ib) {
    if constexpr (std::is_same_v<SA, Half> && std::is_same_v<SB, Half> && std::is_same_v<SOut, Half>) {
      float va[kHalfChunk], vb[kHalfChunk];
      for (int64_t j0 = 0; j0 < inner; j0 += kHalfChunk) {
        const int64_t m = std::min(kHalfChunk, inner - j0);
        widenHalves(pa, oa + j0 * ia, ia, m, va);
        widenHalves(pb, ob + j0 * ib, ib, m, vb);
        for (int64_t j = 0; j < m; ++j) va[j] = fn(va[j], vb[j]);
        narrowToHalves(va, m, po, base + j0);
      }
    } else {
      // The common strides as constants (both operands contiguous, or one broadcast), so the loop vectorises. The
      // pointers and bounds by value: stores through uint8_t may alias anything reached by reference, which would
      // reload them every element and keep the loop scalar.
      const auto row = [=, &fn](auto sa1, auto sb1) {
        for (int64_t j = 0; j < inner; ++j)
          Elem<SOut>::store(po, base + j, fn(Elem<SA>::load(pa, oa + j * sa1), Elem<SB>::load(pb, ob + j * sb1)));
      };
      using One = std::integral_constant<int64_t, 1>;
      using Zero = std::integral_constant<int64_t, 0>;
      if (ia == 1 && ib == 1)
        row(One{}, One{});
      else if (ia == 1 && ib == 0)
        row(One{}, Zero{});
      else if (ia == 0 && ib == 1)
        row(Zero{}, One{});
      else
        row(ia, ib);
    }
  };
  // An operand with as many elements as the output is the output's shape (each extent 1 or the output's): same
  // shapes and a scalar on either side, most element-wise nodes of a model, are one span with no strides worked out.
  const int64_t na = a.numel(), nb = b.numel();
  if ((na == total || na == 1) && (nb == total || nb == 1)) {
    span(0, total, 0, 0, na == total ? 1 : 0, nb == total ? 1 : 0);
    return out.finish();
  }
  const std::vector<int64_t>& od = out.dims();
  // The axes as the loop walks them: extent-1 axes dropped, and neighbouring axes merged where both operands step
  // through them as one (contiguous, or both broadcast): a per-channel scale over [N, C, 7, 7] walks rows of 49, an
  // attention mask [B, 1, 1, T] over scores [B, H, S, T] rows of T.
  std::vector<int64_t> dims, sa, sb;
  {
    const std::vector<int64_t> fa = broadcastStrides(od, a.dims()), fb = broadcastStrides(od, b.dims());
    dims.reserve(od.size());
    sa.reserve(od.size());
    sb.reserve(od.size());
    for (size_t k = 0; k < od.size(); ++k)
      if (od[k] != 1) {
        dims.push_back(od[k]);
        sa.push_back(fa[k]);
        sb.push_back(fb[k]);
      }
    for (size_t k = dims.size(); k-- > 1;) {  // axes k - 1 and k
      if (sa[k - 1] != sa[k] * dims[k] || sb[k - 1] != sb[k] * dims[k]) continue;
      dims[k - 1] *= dims[k];
      sa[k - 1] = sa[k];
      sb[k - 1] = sb[k];
      dims.erase(dims.begin() + static_cast<ptrdiff_t>(k));
      sa.erase(sa.begin() + static_cast<ptrdiff_t>(k));
      sb.erase(sb.begin() + static_cast<ptrdiff_t>(k));
    }
  }
  if (!dims.empty() && dims.back() > 1) {
    // Row by row: the walker steps once per row of the last axis (not the walker's per-element bookkeeping: a BERT
    // layer's bias Adds spent 8% of a run in it).
    const int64_t inner = dims.back(), ia = sa.back(), ib = sb.back();
    sa.pop_back();
    sb.pop_back();
    dims.pop_back();
    const int64_t rows = total / inner;
    if (dims.size() == 1) {  // one axis of rows (a bias over tokens, a LayerNorm's division): offsets by multiplying
      for (int64_t r = 0; r < rows; ++r) span(r * inner, inner, r * sa[0], r * sb[0], ia, ib);
      return out.finish();
    }
    StrideWalker w(std::move(dims), {sa, sb});
    for (int64_t r = 0; r < rows; ++r, w.next()) span(r * inner, inner, w.offset(0), w.offset(1), ia, ib);
    return out.finish();
  }
  BroadcastWalker w(od, {&a.dims(), &b.dims()});
  for (int64_t i = 0; i < total; ++i, w.next())
    Elem<SOut>::store(po, i, fn(Elem<SA>::load(pa, w.offset(0)), Elem<SB>::load(pb, w.offset(1))));
  return out.finish();
}

// Same-type unary op over the element types in Set: out = fn(x) computed in ComputeOf<S>; declines other types.
template <unsigned Set, typename Fn>
std::vector<Tensor> unary(const KernelContext& ctx, Fn fn) {
  const Tensor& x = ctx.required(0);
  std::vector<Tensor> out;
  dispatch<Set>(x.dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    using C = ComputeOf<S>;
    out.push_back(mapUnary<S, S>(ctx, x, [&](C v) { return static_cast<C>(fn(v)); }));
  });
  return out;
}

// Both inputs of one element type, output of that type. fn(x, y, undefined) sets `undefined` for a result that has
// no defined value (integer division by zero): the node fails saying so (folding then leaves it, with a warning).
template <unsigned Set, typename Fn>
std::vector<Tensor> binary(const KernelContext& ctx, const Tensor& a, const Tensor& b, Fn fn) {
  if (a.dtype() != b.dtype()) ctx.fail("input element types differ");
  bool undefined = false;
  std::vector<Tensor> out;
  dispatch<Set>(a.dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    using C = ComputeOf<S>;
    out.push_back(mapBinary<S, S, S>(ctx, a, b, [&](C x, C y) { return static_cast<C>(fn(x, y, undefined)); }));
  });
  if (undefined) ctx.fail("integer division or modulo by zero, which has no defined result");
  return out;
}
template <unsigned Set, typename Fn>
std::vector<Tensor> binary(const KernelContext& ctx, Fn fn) {
  return binary<Set>(ctx, ctx.required(0), ctx.required(1), fn);
}

// A strict total order for sorting values that may be NaN (NaN above +inf, all NaNs equal), so std::sort and
// friends keep their strict-weak-ordering precondition.
template <typename C>
bool totalLess(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (a != a) return false;
    if (b != b) return true;
  }
  return a < b;
}
template <typename C>
bool totalEqual(C a, C b) {
  return !totalLess(a, b) && !totalLess(b, a);
}

// The families, each in its own file.
void registerElementwiseMathKernels(KernelRegistry& r);
void registerElementwiseLogicKernels(KernelRegistry& r);
void registerShapeKernels(KernelRegistry& r);
void registerMovementKernels(KernelRegistry& r);
void registerCastKernels(KernelRegistry& r);
void registerTransDataKernels(KernelRegistry& r);
void registerReduceKernels(KernelRegistry& r);
void registerFusedKernels(KernelRegistry& r);  // kiln: fused Vector ops
void registerMatMulKernels(KernelRegistry& r);
void registerConvKernels(KernelRegistry& r);
void registerPoolKernels(KernelRegistry& r);
void registerSoftmaxKernels(KernelRegistry& r);
void registerNormalizationKernels(KernelRegistry& r);
void registerFusedNnKernels(KernelRegistry& r);  // kiln: fused Cube/Vector NN ops
void registerExperimentalKernels(KernelRegistry& r);  // opset 1-9 experimental: ImageScaler, Crop, Affine...
void registerContribAttentionKernels(KernelRegistry& r);  // com.microsoft: Attention, MultiHeadAttention, RotaryEmbedding
void registerRecurrentKernels(KernelRegistry& r);
void registerResizeKernels(KernelRegistry& r);
void registerPadKernels(KernelRegistry& r);
void registerFusedElementwiseKernels(KernelRegistry& r);  // kiln:FusedElementwise
void registerActivationKernels(KernelRegistry& r);
void registerTrigonometryKernels(KernelRegistry& r);
void registerElementwiseBitsKernels(KernelRegistry& r);
void registerLinalgKernels(KernelRegistry& r);
void registerIndexingKernels(KernelRegistry& r);
void registerScatterGatherKernels(KernelRegistry& r);
void registerRearrangeKernels(KernelRegistry& r);
void registerUniqueKernels(KernelRegistry& r);
void registerSpatialTransformKernels(KernelRegistry& r);  // AffineGrid, GridSample, Col2Im, CenterCropPad
void registerOnnxAttentionKernels(KernelRegistry& r);
void registerDftKernels(KernelRegistry& r);
void registerCacheKernels(KernelRegistry& r);  // TensorScatter-24
void registerDeformConvKernels(KernelRegistry& r);
void registerStringKernels(KernelRegistry& r);
void registerLossKernels(KernelRegistry& r);  // NegativeLogLikelihoodLoss  // StringConcat, StringSplit, RegexFullMatch  // ai.onnx Attention-23, RotaryEmbedding-23
void registerEinsumKernels(KernelRegistry& r);
void registerQuantizeKernels(KernelRegistry& r);
void registerIntegerMatMulKernels(KernelRegistry& r);
void registerDetectionKernels(KernelRegistry& r);

}  // namespace kiln::kernels
