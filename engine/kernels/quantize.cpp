// QuantizeLinear, DequantizeLinear (per-tensor, per-axis and blocked scales) and DynamicQuantizeLinear (uint8).
// Quantization divides in float (the scale's precision, 16-bit scales rounded once as the reference does), rounds
// half to even, adds the zero point and saturates to the output type. Integer outputs: int8/uint8/int16/uint16;
// int4 / uint4 / float8 / float4 go through double (quantizeLowBit, dequantizeLowBit).
#include <cmath>

#include "ir/low_bit_types.h"
#include "kernels/nn_kernels.h"
#include "ir/graph.h"

namespace kiln::kernels {
namespace {

// Where each element of x finds its scale and zero point: per-tensor (one value), per-axis (a 1-D tensor along
// `axis`) or blocked (same rank as x, axis extent ceil(extent / block_size)).
struct ScaleMap {
  enum Kind { PerTensor, PerAxis, Blocked } kind = PerTensor;
  int64_t axis = 0, blockSize = 0;
  std::vector<int64_t> xDims, scaleStrides;

  // Scale element index of x's flat element i (row-major over xDims).
  int64_t index(int64_t i) const {
    if (kind == PerTensor) return 0;
    int64_t rest = i, off = 0;
    for (size_t d = xDims.size(); d-- > 0;) {
      const int64_t extent = xDims[d];
      const int64_t c = extent == 0 ? 0 : rest % extent;
      rest = extent == 0 ? 0 : rest / extent;
      if (kind == PerAxis) {
        if (static_cast<int64_t>(d) == axis) return c;
      } else {
        off += (static_cast<int64_t>(d) == axis ? c / blockSize : c) * scaleStrides[d];
      }
    }
    return off;
  }
};

ScaleMap scaleMap(const KernelContext& ctx, const Tensor& x, const Tensor& scale, const Tensor* zeroPoint) {
  const Node& node = ctx.node();
  ScaleMap m;
  m.xDims = x.dims();
  if (zeroPoint && zeroPoint->dims() != scale.dims()) ctx.fail("zero point and scale have different shapes");
  const int64_t rank = static_cast<int64_t>(x.dims().size());
  const int64_t blockSize = node.attrInt("block_size", 0);
  if (blockSize < 0) ctx.fail("block_size must not be negative");
  if (scale.dims().empty() || (scale.dims().size() == 1 && scale.numel() == 1 && blockSize == 0)) {
    if (scale.numel() != 1) ctx.fail("scale has no element");
    return m;
  }
  if (rank == 0) ctx.fail("a per-axis scale needs an input of rank 1 or more");
  m.axis = normalizeAxis(ctx, node.attrInt("axis", 1), rank, "axis");
  const int64_t extent = x.dims()[static_cast<size_t>(m.axis)];
  if (blockSize == 0) {
    if (scale.dims().size() != 1 || scale.dims()[0] != extent)
      ctx.fail("per-axis scale must be 1-D with the axis' extent " + std::to_string(extent));
    m.kind = ScaleMap::PerAxis;
    return m;
  }
  if (static_cast<int64_t>(scale.dims().size()) != rank) ctx.fail("blocked scale must have the input's rank");
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t want = d == m.axis ? (extent + blockSize - 1) / blockSize : x.dims()[static_cast<size_t>(d)];
    if (scale.dims()[static_cast<size_t>(d)] != want) ctx.fail("blocked scale shape does not match the input");
  }
  m.kind = ScaleMap::Blocked;
  m.blockSize = blockSize;
  m.scaleStrides = stridesOf(scale.dims());
  return m;
}

// Per-tensor and per-axis scales as runs of consecutive elements sharing one scale: run(scale index, first, count).
// False for blocked scales (the caller walks element by element then).
template <typename Run>
bool forScaleRuns(const ScaleMap& map, int64_t numel, Run run) {
  if (map.kind == ScaleMap::PerTensor) {
    run(0, 0, numel);
    return true;
  }
  if (map.kind != ScaleMap::PerAxis || numel == 0) return map.kind == ScaleMap::PerAxis;
  const auto axis = static_cast<size_t>(map.axis);
  int64_t inner = 1;
  for (size_t d = axis + 1; d < map.xDims.size(); ++d) inner *= map.xDims[d];
  const int64_t extent = map.xDims[axis], outer = numel / (extent * inner);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t c = 0; c < extent; ++c) run(c, (o * extent + c) * inner, inner);
  return true;
}

template <typename T>
const T* typedIfAligned(const Tensor& t) {
  return reinterpret_cast<uintptr_t>(t.data()) % alignof(T) == 0 ? reinterpret_cast<const T*>(t.data()) : nullptr;
}

// Integer types a quantized tensor may have here.
constexpr unsigned kQuantTypes = kInts;
template <typename Q>
inline constexpr bool kQuantOk = std::is_same_v<Q, int8_t> || std::is_same_v<Q, uint8_t> ||
                                 std::is_same_v<Q, int16_t> || std::is_same_v<Q, uint16_t>;

// round half to even of v, plus zp, saturated to Q (NaN gives the zero point).
template <typename Q>
Q saturateRound(double v, int64_t zp) {
  if (v != v) return static_cast<Q>(zp);
  const double r = std::nearbyint(v) + static_cast<double>(zp);
  return floatToInt<Q>(r);
}

// The low-bit paths (int4 / uint4, float8, float4; opsets 19 to 23): values through double, packed at the end.
// x / scale is computed in float (as ONNX Runtime does for an fp32 input), rounded half to even for the integer
// types, the zero point added and the result saturated to the type's range; float8 takes Cast's rounding and the
// node's saturate.
std::vector<Tensor> quantizeLowBit(const KernelContext& ctx, const Tensor& x, const Tensor& scale, const Tensor* zp,
                                   DType outType, const ScaleMap& map) {
  if (!isFloating(x.dtype()) || !isFloating(scale.dtype())) return {};
  const std::vector<double> xv = x.toDouble(), sv = scale.toDouble();
  const std::vector<double> zv = zp ? zp->toDouble() : std::vector<double>{};
  std::vector<double> q(xv.size());
  const bool integral = outType == DType::Int4 || outType == DType::UInt4;
  for (size_t i = 0; i < q.size(); ++i) {
    const int64_t si = map.index(static_cast<int64_t>(i));
    const double z = zp ? zv[static_cast<size_t>(si)] : 0.0;
    const float v = static_cast<float>(xv[i]) / static_cast<float>(sv[static_cast<size_t>(si)]);
    q[i] = integral ? (std::isnan(v) ? z : std::nearbyint(v) + z) : static_cast<double>(v) + z;
  }
  // int4 / uint4 always clamp (QuantizeLinear saturates); float8 follows the node's saturate.
  const bool saturate = integral || ctx.node().attrInt("saturate", 1) != 0;
  return {narrowToLowBit(Tensor::fromVector(DType::Double, x.dims(), q), outType, saturate)};
}

std::vector<Tensor> dequantizeLowBit(const KernelContext& ctx, const Tensor& x, const Tensor& scale, const Tensor* zp,
                                     const ScaleMap& map) {
  if (!isFloating(scale.dtype())) return {};
  const std::vector<double> xv = x.toDouble(), sv = scale.toDouble();
  const std::vector<double> zv = zp ? zp->toDouble() : std::vector<double>{};
  std::vector<double> y(xv.size());
  for (size_t i = 0; i < y.size(); ++i) {
    const int64_t si = map.index(static_cast<int64_t>(i));
    y[i] = (xv[i] - (zp ? zv[static_cast<size_t>(si)] : 0.0)) * sv[static_cast<size_t>(si)];
  }
  const int64_t requested = ctx.node().attrInt("output_dtype", 0);
  const DType outType = requested ? dtypeFromOnnx(static_cast<int>(requested)).value_or(scale.dtype()) : scale.dtype();
  Tensor t = convertTensor(Tensor::fromVector(DType::Double, x.dims(), y), outType, ctx.limits().maxOutputBytes);
  if (!t.valid()) return {};
  return {t};
}

std::vector<Tensor> quantizeLinear(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  const Tensor& scale = ctx.required(1);
  const Tensor* zp = ctx.input(2);
  const Node& node = ctx.node();
  {
    const int64_t requested = node.attrInt("output_dtype", 0);
    const DType lowBit = zp ? zp->dtype() : dtypeFromOnnx(static_cast<int>(requested)).value_or(DType::Undefined);
    if (isPacked(lowBit) || isLowBitFloat(lowBit)) {
      if (zp && requested != 0 && requested != static_cast<int64_t>(zp->dtype()))
        ctx.fail("output_dtype differs from the zero point's element type");
      return quantizeLowBit(ctx, x, scale, zp, lowBit, scaleMap(ctx, x, scale, zp));
    }
  }
  DType outType = zp ? zp->dtype() : static_cast<DType>(0);
  if (!zp) {
    const int64_t requested = node.attrInt("output_dtype", 0);
    if (requested != 0 && requested != static_cast<int64_t>(DType::UInt8) &&
        requested != static_cast<int64_t>(DType::Int8) && requested != static_cast<int64_t>(DType::Int16) &&
        requested != static_cast<int64_t>(DType::UInt16))
      return {};
    outType = requested == 0 ? DType::UInt8 : static_cast<DType>(requested);
  } else if (node.attrInt("output_dtype", 0) != 0 &&
             node.attrInt("output_dtype", 0) != static_cast<int64_t>(zp->dtype())) {
    ctx.fail("output_dtype differs from the zero point's element type");
  }
  if (x.dtype() != DType::Int32 && scale.dtype() != x.dtype()) ctx.fail("scale and input element types differ");
  const ScaleMap map = scaleMap(ctx, x, scale, zp);
  std::vector<Tensor> out;
  dispatch<kQuantTypes>(outType, [&](auto qtag) {
    using Q = typename decltype(qtag)::type;
    if constexpr (kQuantOk<Q>) {
      dispatch<kFloats>(scale.dtype(), [&](auto stag) {
        using SS = typename decltype(stag)::type;
        const auto divide = [&](int64_t i) -> double {
          const int64_t si = map.index(i);
          const auto s = Elem<SS>::load(scale.data(), si);
          if (x.dtype() == DType::Int32)
            return static_cast<double>(Elem<int32_t>::load(x.data(), i)) / static_cast<double>(s);
          double q = 0;
          dispatch<kFloats>(x.dtype(), [&](auto xtag) {
            using SX = typename decltype(xtag)::type;
            using W = nn::Work<SX>;
            q = static_cast<double>(nn::roundAs<SX>(static_cast<W>(Elem<SX>::load(x.data(), i)) / static_cast<W>(s)));
          });
          return q;
        };
        if (x.dtype() != DType::Int32 && dtypeOf<SS>() != x.dtype()) return;
        OutBuffer y(ctx, outType, x.dims());
        if constexpr (std::is_same_v<SS, float>) {
          // fp32 in, per-tensor or per-axis: the same arithmetic over runs sharing a scale, straight from pointers.
          const float* xf = x.dtype() == DType::Float ? typedIfAligned<float>(x) : nullptr;
          const float* sf = typedIfAligned<float>(scale);
          const Q* zq = zp ? typedIfAligned<Q>(*zp) : nullptr;
          Q* yq = reinterpret_cast<Q*>(y.data());
          using W = nn::Work<float>;
          if (xf && sf && (!zp || zq) &&
              forScaleRuns(map, y.numel(), [&](int64_t si, int64_t first, int64_t count) {
                const W sc = static_cast<W>(sf[si]);
                const int64_t z = zq ? static_cast<int64_t>(zq[si]) : 0;
                for (int64_t k = first; k < first + count; ++k)
                  yq[k] = saturateRound<Q>(static_cast<double>(nn::roundAs<float>(static_cast<W>(xf[k]) / sc)), z);
              })) {
            out.push_back(y.finish());
            return;
          }
        }
        for (int64_t i = 0; i < y.numel(); ++i) {
          const int64_t z = zp ? static_cast<int64_t>(Elem<Q>::load(zp->data(), map.index(i))) : 0;
          Elem<Q>::store(y.data(), i, saturateRound<Q>(divide(i), z));
        }
        out.push_back(y.finish());
      });
    }
  });
  return out;
}

std::vector<Tensor> dequantizeLinear(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  const Tensor& scale = ctx.required(1);
  const Tensor* zp = ctx.input(2);
  if (zp && zp->dtype() != x.dtype()) ctx.fail("zero point and input element types differ");
  const ScaleMap map = scaleMap(ctx, x, scale, zp);
  if (isPacked(x.dtype()) || isLowBitFloat(x.dtype()) || isLowBitFloat(scale.dtype())) {
    // An MX scale (float8e8m0, opset 24) is widened to fp32: the output is output_dtype, else fp32.
    const Tensor wideScale = widenLowBit(scale);
    return dequantizeLowBit(ctx, x, wideScale, zp, map);
  }
  std::vector<Tensor> out;
  dispatch<kQuantTypes>(x.dtype(), [&](auto qtag) {
    using Q = typename decltype(qtag)::type;
    if constexpr (kQuantOk<Q> || std::is_same_v<Q, int32_t>) {
      if constexpr (std::is_same_v<Q, int32_t>) {
        if (zp)
          for (int64_t i = 0; i < zp->numel(); ++i)
            if (Elem<int32_t>::load(zp->data(), i) != 0) ctx.fail("an int32 input's zero point must be 0");
      }
      dispatch<kFloats>(scale.dtype(), [&](auto stag) {
        using SS = typename decltype(stag)::type;
        using W = nn::Work<SS>;
        OutBuffer y(ctx, scale.dtype(), x.dims());
        if constexpr (std::is_same_v<SS, float>) {
          // An fp32 scale, per-tensor or per-axis: the same arithmetic over runs sharing a scale, from pointers.
          const Q* xq = typedIfAligned<Q>(x);
          const float* sf = typedIfAligned<float>(scale);
          const Q* zq = zp ? typedIfAligned<Q>(*zp) : nullptr;
          float* yf = reinterpret_cast<float*>(y.data());
          if (xq && sf && (!zp || zq) &&
              forScaleRuns(map, y.numel(), [&](int64_t si, int64_t first, int64_t count) {
                const W sc = static_cast<W>(sf[si]);
                const int64_t z = zq ? static_cast<int64_t>(zq[si]) : 0;
                for (int64_t k = first; k < first + count; ++k)
                  yf[k] = static_cast<float>(static_cast<W>(static_cast<int64_t>(xq[k]) - z) * sc);
              })) {
            out.push_back(y.finish());
            return;
          }
        }
        for (int64_t i = 0; i < y.numel(); ++i) {
          const int64_t si = map.index(i);
          const int64_t z = zp ? static_cast<int64_t>(Elem<Q>::load(zp->data(), si)) : 0;
          const W d = static_cast<W>(static_cast<int64_t>(Elem<Q>::load(x.data(), i)) - z);
          Elem<SS>::store(y.data(), i, static_cast<ComputeOf<SS>>(d * static_cast<W>(Elem<SS>::load(scale.data(), si))));
        }
        out.push_back(y.finish());
      });
    }
  });
  return out;
}

// y_scale = (max(0, max x) - min(0, min x)) / 255, zero point = saturate(round(-min / scale)), then QuantizeLinear.
// An all-zero (or empty) input takes scale 1/255 instead of 0 so nothing divides by zero.
std::vector<Tensor> dynamicQuantizeLinear(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  if (x.dtype() != DType::Float) return {};
  float lo = 0, hi = 0;
  const uint8_t* bytes = x.data();  // (a virtual call: once, not per element)
  for (int64_t i = 0; i < x.numel(); ++i) {
    const float v = Elem<float>::load(bytes, i);
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  const float scale = (hi == lo ? 1.0f : hi - lo) / 255.0f;
  float zpf = 0.0f - lo / scale;
  if (!(zpf >= 0.0f)) zpf = 0.0f;  // also NaN (an infinite input range)
  if (zpf > 255.0f) zpf = 255.0f;
  const int64_t zp = static_cast<int64_t>(std::nearbyint(zpf));
  OutBuffer y(ctx, DType::UInt8, x.dims());
  uint8_t* q = y.data();
  for (int64_t i = 0; i < y.numel(); ++i)
    Elem<uint8_t>::store(q, i, saturateRound<uint8_t>(static_cast<double>(Elem<float>::load(bytes, i) / scale), zp));
  OutBuffer s(ctx, DType::Float, {});
  Elem<float>::store(s.data(), 0, scale);
  OutBuffer z(ctx, DType::UInt8, {});
  Elem<uint8_t>::store(z.data(), 0, static_cast<uint8_t>(zp));
  std::vector<Tensor> out;
  out.push_back(y.finish());
  out.push_back(s.finish());
  out.push_back(z.finish());
  return out;
}

// kiln:WeightQuantMatMul(A, Wq, scale [, zp]): the weights dequantized as DequantizeLinear does (the node's axis and
// block_size), then MatMul's kernel.
std::vector<Tensor> weightQuantMatMul(const KernelContext& ctx) {
  std::vector<const Tensor*> dqInputs{&ctx.required(1), &ctx.required(2)};
  if (ctx.input(3)) dqInputs.push_back(ctx.input(3));
  const KernelContext dqCtx(ctx.node(), dqInputs, ctx.limits());
  std::vector<Tensor> w = dequantizeLinear(dqCtx);
  if (w.empty()) return {};
  const KernelFn matmul = KernelRegistry::global().find("", "MatMul");
  if (!matmul) return {};
  std::vector<const Tensor*> mmInputs{&ctx.required(0), &w[0]};
  const KernelContext mmCtx(ctx.node(), mmInputs, ctx.limits());
  return matmul(mmCtx);
}

}  // namespace

void registerQuantizeKernels(KernelRegistry& r) {
  r.add("WeightQuantMatMul", weightQuantMatMul, "kiln");
  r.add("QuantizeLinear", quantizeLinear);
  r.add("DequantizeLinear", dequantizeLinear);
  r.add("DynamicQuantizeLinear", dynamicQuantizeLinear);
}

}  // namespace kiln::kernels
