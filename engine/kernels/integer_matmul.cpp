// MatMulInteger, ConvInteger, QLinearMatMul and QLinearConv on int8/uint8 operands. Operands are widened with their
// zero points subtracted; matrix products accumulate in int32 (wrapping, as the device does). Convolutions reuse the
// fp64 conv core: every product and partial sum of such integers is exact in a double (|sum| < 2^53 for any input the
// size limits admit), and the exact sum is then wrapped to int32. The QLinear ops requantize with
// round(acc * (scale_a * scale_b / scale_y)) + zero point, half to even, saturated to the output type.
#include <cmath>

#include "kernels/nn_kernels.h"
#include "ir/graph.h"

namespace kiln::kernels {
namespace {

template <typename Q>
inline constexpr bool kInt8 = std::is_same_v<Q, int8_t> || std::is_same_v<Q, uint8_t>;

bool isInt8(DType t) { return t == DType::Int8 || t == DType::UInt8; }

// The elements of t (int8/uint8) minus their zero point zp(i) (an index into zpT, or none), widened.
template <typename W, typename ZpIndex>
std::vector<W> centered(const KernelContext& ctx, const Tensor& t, const Tensor* zpT, ZpIndex zpIndex) {
  if (zpT && zpT->dtype() != t.dtype()) ctx.fail("a zero point's element type differs from its operand's");
  checkScratch(ctx, t.numel(), sizeof(W));
  std::vector<W> v(static_cast<size_t>(t.numel()));
  dispatch<kInts>(t.dtype(), [&](auto tag) {
    using Q = typename decltype(tag)::type;
    if constexpr (kInt8<Q>) {
      const uint8_t* bytes = t.data();  // (a virtual call: once, not per element)
      const uint8_t* zpBytes = zpT ? zpT->data() : nullptr;
      for (int64_t i = 0; i < t.numel(); ++i) {
        const int32_t z = zpBytes ? static_cast<int32_t>(Elem<Q>::load(zpBytes, zpIndex(i))) : 0;
        v[static_cast<size_t>(i)] = static_cast<W>(static_cast<int32_t>(Elem<Q>::load(bytes, i)) - z);
      }
    }
  });
  return v;
}

// How a matmul operand's zero point (or scale) spreads: one value, one per row of A / column of B (1-D), or the
// operand's shape with the reduced axis set to 1 (N-D).
enum class Spread { Scalar, Vector, Full };

Spread spreadOf(const KernelContext& ctx, const Tensor* t, const std::vector<int64_t>& operand, bool isA,
                const char* what) {
  if (!t || t->numel() == 1) {
    if (t && t->numel() != 1) ctx.fail(std::string(what) + " has no element");
    return Spread::Scalar;
  }
  const size_t r = operand.size();
  const int64_t extent = isA ? (r > 1 ? operand[r - 2] : 1) : (r > 1 ? operand[r - 1] : 1);
  if (t->dims().size() == 1 && t->dims()[0] == extent && r > 1) return Spread::Vector;
  std::vector<int64_t> want = operand;
  if (r > 1) want[isA ? r - 1 : r - 2] = 1;
  if (r > 1 && t->dims() == want) return Spread::Full;
  ctx.fail(std::string(what) + " does not match its operand's rows or columns");
}

// Index into a spread tensor of flat element i of an operand [..., R, C] (A: rows matter, B: columns matter).
int64_t spreadIndex(Spread s, bool isA, int64_t i, int64_t rows, int64_t cols) {
  if (s == Spread::Scalar || rows == 0 || cols == 0) return 0;
  const int64_t row = i / cols;  // flat row over all batches
  const int64_t col = i % cols;
  if (isA) return s == Spread::Vector ? row % rows : row;
  return s == Spread::Vector ? col : (row / rows) * cols + col;
}

struct Dims2 {
  int64_t rows, cols;
};
Dims2 matDims(const std::vector<int64_t>& d, bool isA) {
  if (d.size() == 1) return isA ? Dims2{1, d[0]} : Dims2{d[0], 1};
  return {d[d.size() - 2], d.back()};
}

// int32 product of the centered operands, wrapped.
std::vector<int32_t> intMatMul(const KernelContext& ctx, const nn::MatMulPlan& p, const std::vector<int32_t>& a,
                               const std::vector<int32_t>& b, int64_t outCount) {
  checkScratch(ctx, outCount, sizeof(int32_t));
  std::vector<int32_t> y(static_cast<size_t>(outCount), 0);
  nn::wrappingMatMul<int32_t>(
      p, [&](int64_t i) { return a[static_cast<size_t>(i)]; }, [&](int64_t i) { return b[static_cast<size_t>(i)]; },
      [&](int64_t i, int32_t v) { y[static_cast<size_t>(i)] = v; });
  return y;
}

// Per output element of the matmul: its A row (flat) and B column, for per-row / per-column scales.
struct MatMulResult {
  nn::MatMulPlan plan;
  std::vector<int32_t> acc;
};

MatMulResult integerProduct(const KernelContext& ctx, const Tensor& a, const Tensor* aZp, const Tensor& b,
                            const Tensor* bZp) {
  MatMulResult r;
  r.plan = nn::matMulPlan(ctx, a.dims(), b.dims(), false, false);
  const Spread sa = spreadOf(ctx, aZp, a.dims(), true, "A's zero point");
  const Spread sb = spreadOf(ctx, bZp, b.dims(), false, "B's zero point");
  const Dims2 da = matDims(a.dims(), true), db = matDims(b.dims(), false);
  OutBuffer probe(ctx, DType::Int32, r.plan.outDims);
  const auto av = centered<int32_t>(ctx, a, aZp, [&](int64_t i) { return spreadIndex(sa, true, i, da.rows, da.cols); });
  const auto bv = centered<int32_t>(ctx, b, bZp, [&](int64_t i) { return spreadIndex(sb, false, i, db.rows, db.cols); });
  r.acc = intMatMul(ctx, r.plan, av, bv, probe.numel());
  return r;
}

std::vector<Tensor> matMulInteger(const KernelContext& ctx) {
  const Tensor& a = ctx.required(0);
  const Tensor& b = ctx.required(1);
  if (!isInt8(a.dtype()) || !isInt8(b.dtype())) return {};
  const MatMulResult r = integerProduct(ctx, a, ctx.input(2), b, ctx.input(3));
  OutBuffer y(ctx, DType::Int32, r.plan.outDims);
  if (y.numel() > 0) std::memcpy(y.data(), r.acc.data(), r.acc.size() * sizeof(int32_t));
  return {y.finish()};
}

// round half to even of acc * multiplier plus zp, saturated to Q.
template <typename Q>
Q requantize(int64_t acc, double multiplier, int64_t zp) {
  const double v = static_cast<double>(acc) * multiplier;
  if (v != v) return static_cast<Q>(zp);
  return floatToInt<Q>(std::nearbyint(v) + static_cast<double>(zp));
}

float floatAt(const Tensor& t, int64_t i) { return Elem<float>::load(t.data(), i); }

void requireFloatScale(const KernelContext& ctx, const Tensor& s, const char* what) {
  if (s.dtype() != DType::Float) ctx.fail(std::string(what) + " must be float");
  if (s.numel() == 0) ctx.fail(std::string(what) + " has no element");
}

std::vector<Tensor> qLinearMatMul(const KernelContext& ctx) {
  const Tensor& a = ctx.required(0);
  const Tensor& aScale = ctx.required(1);
  const Tensor& b = ctx.required(3);
  const Tensor& bScale = ctx.required(4);
  const Tensor& yScale = ctx.required(6);
  const Tensor* yZp = ctx.input(7);
  if (!isInt8(a.dtype()) || !isInt8(b.dtype()) || (yZp && !isInt8(yZp->dtype()))) return {};
  if (aScale.dtype() != DType::Float || bScale.dtype() != DType::Float || yScale.dtype() != DType::Float) return {};
  requireFloatScale(ctx, aScale, "A's scale");
  requireFloatScale(ctx, bScale, "B's scale");
  requireFloatScale(ctx, yScale, "Y's scale");
  const MatMulResult r = integerProduct(ctx, a, ctx.input(2), b, ctx.input(5));
  const Spread sa = spreadOf(ctx, &aScale, a.dims(), true, "A's scale");
  const Spread sb = spreadOf(ctx, &bScale, b.dims(), false, "B's scale");
  if (yScale.numel() != 1 || (yZp && yZp->numel() != 1)) ctx.fail("Y's scale and zero point must be scalars");
  const Dims2 da = matDims(a.dims(), true), db = matDims(b.dims(), false);
  const DType outType = yZp ? yZp->dtype() : DType::UInt8;
  const nn::MatMulPlan& p = r.plan;
  std::vector<Tensor> out;
  dispatch<kInts>(outType, [&](auto tag) {
    using Q = typename decltype(tag)::type;
    if constexpr (kInt8<Q>) {
      OutBuffer y(ctx, outType, p.outDims);
      const int64_t zp = yZp ? static_cast<int64_t>(Elem<Q>::load(yZp->data(), 0)) : 0;
      const float ys = floatAt(yScale, 0);
      for (size_t bi = 0; bi < p.aOffsets.size(); ++bi)
        for (int64_t i = 0; i < p.m; ++i)
          for (int64_t j = 0; j < p.n; ++j) {
            // The A element at the row's start and the B element at the column's start name the scales.
            const int64_t ai = p.aOffsets[bi] + i * p.k, bj = p.bOffsets[bi] + j;
            const float as = floatAt(aScale, p.k == 0 ? 0 : spreadIndex(sa, true, ai, da.rows, da.cols));
            const float bs = floatAt(bScale, p.k == 0 ? 0 : spreadIndex(sb, false, bj, db.rows, db.cols));
            const float multiplier = as * bs / ys;
            const int64_t o = static_cast<int64_t>(bi) * p.m * p.n + i * p.n + j;
            Elem<Q>::store(y.data(), o, requantize<Q>(r.acc[static_cast<size_t>(o)], multiplier, zp));
          }
      out.push_back(y.finish());
    }
  });
  return out;
}

// conv(x - xZp, w - wZp[m]) (+ bias) as exact integers (int64), computed by the fp64 core.
struct ConvResult {
  nn::ConvShape shape;
  std::vector<int64_t> acc;
};

ConvResult integerConv(const KernelContext& ctx, const Tensor& x, const Tensor* xZp, const Tensor& w,
                       const Tensor* wZp, const Tensor* bias) {
  ConvResult r;
  if (bias && bias->dtype() != DType::Int32) ctx.fail("B must be int32");
  r.shape = nn::convShape(ctx, x.dims(), w.dims(), bias);
  if (xZp && xZp->numel() != 1) ctx.fail("X's zero point must be a scalar");
  const int64_t m = r.shape.outChannels;
  bool perChannel = false;
  if (wZp && wZp->numel() != 1) {
    if (wZp->dims().size() != 1 || wZp->dims()[0] != m) ctx.fail("W's zero point must be a scalar or one per output channel");
    perChannel = true;
  }
  const int64_t perM = m == 0 ? 0 : w.numel() / m;
  OutBuffer probe(ctx, DType::Int32, r.shape.outDims);
  const auto xv = centered<double>(ctx, x, xZp, [](int64_t) { return int64_t{0}; });
  const auto wv = centered<double>(ctx, w, wZp, [&](int64_t i) { return perChannel && perM > 0 ? i / perM : 0; });
  std::vector<double> bv;
  if (bias) {
    bv.resize(static_cast<size_t>(bias->numel()));
    for (int64_t i = 0; i < bias->numel(); ++i) bv[static_cast<size_t>(i)] = Elem<int32_t>::load(bias->data(), i);
  }
  checkScratch(ctx, probe.numel(), sizeof(double) + sizeof(int64_t));
  std::vector<double> y(static_cast<size_t>(probe.numel()), 0.0);
  nn::convolve(ctx, r.shape, xv.data(), wv.data(), bias ? bv.data() : nullptr, y.data());
  r.acc.resize(y.size());
  for (size_t i = 0; i < y.size(); ++i) r.acc[i] = static_cast<int64_t>(y[i]);
  return r;
}

std::vector<Tensor> convInteger(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  const Tensor& w = ctx.required(1);
  if (!isInt8(x.dtype()) || !isInt8(w.dtype())) return {};
  const ConvResult r = integerConv(ctx, x, ctx.input(2), w, ctx.input(3), nullptr);
  OutBuffer y(ctx, DType::Int32, r.shape.outDims);
  for (int64_t i = 0; i < y.numel(); ++i)
    Elem<int32_t>::store(y.data(), i,
                         static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(r.acc[static_cast<size_t>(i)]))));
  return {y.finish()};
}

std::vector<Tensor> qLinearConv(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  const Tensor& xScale = ctx.required(1);
  const Tensor& w = ctx.required(3);
  const Tensor& wScale = ctx.required(4);
  const Tensor& yScale = ctx.required(6);
  const Tensor* yZp = ctx.input(7);
  if (!isInt8(x.dtype()) || !isInt8(w.dtype()) || (yZp && !isInt8(yZp->dtype()))) return {};
  if (xScale.dtype() != DType::Float || wScale.dtype() != DType::Float || yScale.dtype() != DType::Float) return {};
  requireFloatScale(ctx, xScale, "X's scale");
  requireFloatScale(ctx, wScale, "W's scale");
  requireFloatScale(ctx, yScale, "Y's scale");
  if (xScale.numel() != 1 || yScale.numel() != 1 || (yZp && yZp->numel() != 1))
    ctx.fail("X's and Y's scales and zero points must be scalars");
  const ConvResult r = integerConv(ctx, x, ctx.input(2), w, ctx.input(5), ctx.input(8));
  const int64_t m = r.shape.outChannels;
  if (wScale.numel() != 1 && (wScale.dims().size() != 1 || wScale.dims()[0] != m))
    ctx.fail("W's scale must be a scalar or one per output channel");
  const DType outType = yZp ? yZp->dtype() : DType::UInt8;
  const std::vector<int64_t>& od = r.shape.outDims;
  int64_t spatial = 1;
  for (size_t d = 2; d < od.size(); ++d) spatial *= od[d];
  std::vector<Tensor> out;
  dispatch<kInts>(outType, [&](auto tag) {
    using Q = typename decltype(tag)::type;
    if constexpr (kInt8<Q>) {
      OutBuffer y(ctx, outType, od);
      const int64_t zp = yZp ? static_cast<int64_t>(Elem<Q>::load(yZp->data(), 0)) : 0;
      for (int64_t i = 0; i < y.numel(); ++i) {
        const int64_t channel = spatial == 0 || m == 0 ? 0 : (i / spatial) % m;
        const float ws = floatAt(wScale, wScale.numel() == 1 ? 0 : channel);
        const float multiplier = floatAt(xScale, 0) * ws / floatAt(yScale, 0);
        // The accumulator is int32 in the spec: wrap before scaling.
        const int32_t acc =
            static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(r.acc[static_cast<size_t>(i)])));
        Elem<Q>::store(y.data(), i, requantize<Q>(acc, multiplier, zp));
      }
      out.push_back(y.finish());
    }
  });
  return out;
}

}  // namespace

void registerIntegerMatMulKernels(KernelRegistry& r) {
  r.add("MatMulInteger", matMulInteger);
  r.add("ConvInteger", convInteger);
  r.add("QLinearMatMul", qLinearMatMul);
  r.add("QLinearConv", qLinearConv);
}

}  // namespace kiln::kernels
