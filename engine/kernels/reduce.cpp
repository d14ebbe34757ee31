// Reductions (ReduceSum/Prod/Mean/Max/Min and the SumSquare/L1/L2/LogSum/LogSumExp variants), CumSum, CumProd.
// Floats accumulate in double and round once at the end; integers accumulate modulo 2^64 and wrap into their type,
// which is what repeated addition in the type would give. Axes come from the attribute (older opsets) or input 1.
#include <cmath>
#include <limits>

#include "kernels/kernel_util.h"
#include "ir/graph.h"

namespace kiln::kernels {
namespace {

enum class Op { Sum, Prod, Mean, Max, Min, SumSquare, L1, L2, LogSum, LogSumExp };

template <typename C>
bool isNan(C v) {
  if constexpr (std::is_floating_point_v<C>)
    return std::isnan(v);
  else
    return false;
}

struct Plan {
  bool identity = false;         // noop_with_empty_axes with no axes: the input unchanged
  std::vector<int64_t> outDims;  // with or without the reduced dims (keepdims)
  std::vector<int64_t> strides;  // per input dim: its stride in the output, 0 where reduced
  int64_t count = 1;             // elements reduced into each output element
};

Plan plan(const KernelContext& ctx, const std::vector<int64_t>& dims) {
  const Node& node = ctx.node();
  std::vector<int64_t> axes;
  if (hasAttr(node, "axes"))
    axes = node.attrInts("axes");
  else if (ctx.input(1))
    axes = intValues(ctx, *ctx.input(1), "axes");
  const bool keepDims = node.attrInt("keepdims", 1) != 0;
  Plan p;
  const int64_t rank = static_cast<int64_t>(dims.size());
  std::vector<bool> reduced(dims.size(), axes.empty());
  if (axes.empty() && node.attrInt("noop_with_empty_axes", 0) != 0) {
    p.identity = true;
    return p;
  }
  for (int64_t a : axes) {
    const size_t n = static_cast<size_t>(normalizeAxis(ctx, a, rank, "axis"));
    if (reduced[n]) ctx.fail("axis " + std::to_string(a) + " repeated");
    reduced[n] = true;
  }
  std::vector<int64_t> kept = dims;  // the output with reduced dims kept as 1
  for (size_t d = 0; d < dims.size(); ++d) {
    if (reduced[d]) {
      kept[d] = 1;
      p.count *= dims[d];
      if (keepDims) p.outDims.push_back(1);
    } else {
      p.outDims.push_back(dims[d]);
    }
  }
  p.strides = stridesOf(kept);
  for (size_t d = 0; d < dims.size(); ++d)
    if (reduced[d]) p.strides[d] = 0;
  return p;
}

template <Op K, typename S>
void reduceTyped(const KernelContext& ctx, const Tensor& x, const Plan& p, std::vector<Tensor>& result) {
  using C = ComputeOf<S>;
  constexpr bool isFloat = kIsFloat<S>;
  constexpr bool extremum = K == Op::Max || K == Op::Min;
  if constexpr (!isFloat && (K == Op::L2 || K == Op::LogSum || K == Op::LogSumExp)) {
    return;  // defined through sqrt/log: floats only
  } else {
    using Acc = std::conditional_t<isFloat, double, std::conditional_t<extremum, C, uint64_t>>;
    Acc init = 0;
    if constexpr (K == Op::Prod) init = 1;
    // The extremum of an empty set is the identity of max/min: -inf/+inf, or the integer type's bounds.
    if constexpr (K == Op::Max && isFloat) init = -std::numeric_limits<double>::infinity();
    if constexpr (K == Op::Max && !isFloat) init = std::numeric_limits<Acc>::lowest();
    if constexpr (K == Op::Min && isFloat) init = std::numeric_limits<double>::infinity();
    if constexpr (K == Op::Min && !isFloat) init = std::numeric_limits<Acc>::max();
    if constexpr (!isFloat && K == Op::Mean)
      if (p.count == 0) return;  // integer mean of nothing has no value
    OutBuffer out(ctx, x.dtype(), p.outDims);
    checkScratch(ctx, out.numel(), sizeof(Acc));
    std::vector<Acc> acc(static_cast<size_t>(out.numel()), init);
    const auto step = [](Acc& a, C v) {
      if constexpr (K == Op::Max) {
        if (v > a || isNan(v)) a = static_cast<Acc>(v);  // a NaN sticks: no later comparison replaces it
      } else if constexpr (K == Op::Min) {
        if (v < a || isNan(v)) a = static_cast<Acc>(v);
      } else if constexpr (isFloat) {
        const double d = static_cast<double>(v);
        if constexpr (K == Op::Prod)
          a *= d;
        else if constexpr (K == Op::SumSquare || K == Op::L2)
          a += d * d;
        else if constexpr (K == Op::L1)
          a += std::fabs(d);
        else if constexpr (K == Op::LogSumExp)
          a += std::exp(d);
        else
          a += d;
      } else {
        uint64_t u = static_cast<uint64_t>(v);
        if constexpr (K == Op::L1 && std::is_signed_v<C>)
          if (v < 0) u = 0 - u;
        if constexpr (K == Op::Prod)
          a *= u;
        else if constexpr (K == Op::SumSquare)
          a += u * u;
        else
          a += u;
      }
    };
    // Reduced axes all after the kept ones (LayerNorm's mean over the last axis, a pooled feature map): each output
    // takes one contiguous run of the input, in the order the walk below would give it the same elements.
    const std::vector<int64_t>& dims = x.dims();
    size_t kept = dims.size();
    int64_t run = 1;
    while (kept > 0 && p.strides[kept - 1] == 0) run *= dims[--kept];
    bool rows = true;
    for (int64_t d = static_cast<int64_t>(kept) - 1, expect = 1; d >= 0; expect *= dims[static_cast<size_t>(d)], --d)
      rows = rows && (dims[static_cast<size_t>(d)] == 1 || p.strides[static_cast<size_t>(d)] == expect);
    if (rows && run > 0 && x.numel() == out.numel() * run) {
      const uint8_t* px = x.data();
      for (int64_t r = 0; r < out.numel(); ++r) {
        Acc a = init;
        for (int64_t j = 0; j < run; ++j) step(a, Elem<S>::load(px, r * run + j));
        acc[static_cast<size_t>(r)] = a;
      }
    } else {
      StrideWalker w(x.dims(), {p.strides});
      for (int64_t i = 0; i < x.numel(); ++i, w.next()) step(acc[static_cast<size_t>(w.offset(0))], Elem<S>::load(x.data(), i));
    }
    for (int64_t i = 0; i < out.numel(); ++i) {
      Acc a = acc[static_cast<size_t>(i)];
      if constexpr (isFloat) {
        if constexpr (K == Op::Mean) a /= static_cast<double>(p.count);  // 0/0 = NaN for an empty set
        if constexpr (K == Op::L2) a = std::sqrt(a);
        if constexpr (K == Op::LogSum || K == Op::LogSumExp) a = std::log(a);
        Elem<S>::store(out.data(), i, static_cast<C>(a));
      } else if constexpr (K == Op::Mean) {
        if constexpr (std::is_signed_v<C>)
          Elem<S>::store(out.data(), i, static_cast<C>(static_cast<int64_t>(a) / p.count));
        else
          Elem<S>::store(out.data(), i, static_cast<C>(a / static_cast<uint64_t>(p.count)));
      } else {
        Elem<S>::store(out.data(), i, static_cast<C>(a));
      }
    }
    result.push_back(out.finish());
  }
}

template <Op K>
std::vector<Tensor> reduce(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  const Plan p = plan(ctx, x.dims());
  if (p.identity) return {x};
  std::vector<Tensor> result;
  if (x.dtype() == DType::Bool) {  // ReduceMax-20 / ReduceMin-20: any / all, through uint8
    if constexpr (K == Op::Max || K == Op::Min) {
      const Tensor bytes = convertTensor(x, DType::UInt8, ctx.limits().maxOutputBytes);
      reduceTyped<K, uint8_t>(ctx, bytes, p, result);
      for (Tensor& t : result) t = convertTensor(t, DType::Bool, ctx.limits().maxOutputBytes);
    }
    return result;
  }
  dispatch<kNumeric>(x.dtype(), [&](auto tag) { reduceTyped<K, typename decltype(tag)::type>(ctx, x, p, result); });
  return result;
}

// CumSum(x, axis) and CumProd-26 with exclusive (shift by one: the identity first) and reverse (from the end).
template <bool Product>
std::vector<Tensor> cumulative(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  const Tensor& axisT = ctx.required(1);
  const std::vector<int64_t> axisV = intValues(ctx, axisT, "axis");
  if (axisV.size() != 1) ctx.fail("axis must be a scalar");
  const int64_t rank = static_cast<int64_t>(x.dims().size());
  const size_t axis = static_cast<size_t>(normalizeAxis(ctx, axisV[0], rank, "axis"));
  const bool exclusive = ctx.node().attrInt("exclusive", 0) != 0;
  const bool reverse = ctx.node().attrInt("reverse", 0) != 0;
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= x.dims()[d];
  for (size_t d = axis + 1; d < x.dims().size(); ++d) inner *= x.dims()[d];
  const int64_t n = x.dims()[axis];
  std::vector<Tensor> result;
  dispatch<kNumeric>(x.dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    using C = ComputeOf<S>;
    using Acc = std::conditional_t<kIsFloat<S>, double, uint64_t>;
    OutBuffer out(ctx, x.dtype(), x.dims());
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < inner; ++j) {
        Acc acc = Product ? 1 : 0;
        for (int64_t step = 0; step < n; ++step) {
          const int64_t k = reverse ? n - 1 - step : step;
          const int64_t at = (o * n + k) * inner + j;
          const Acc v = static_cast<Acc>(Elem<S>::load(x.data(), at));
          if (!exclusive) acc = Product ? acc * v : acc + v;
          Elem<S>::store(out.data(), at, static_cast<C>(acc));
          if (exclusive) acc = Product ? acc * v : acc + v;
        }
      }
    result.push_back(out.finish());
  });
  return result;
}

}  // namespace

void registerReduceKernels(KernelRegistry& r) {
  r.add("ReduceSum", reduce<Op::Sum>);
  r.add("ReduceProd", reduce<Op::Prod>);
  r.add("ReduceMean", reduce<Op::Mean>);
  r.add("ReduceMax", reduce<Op::Max>);
  r.add("ReduceMin", reduce<Op::Min>);
  r.add("ReduceSumSquare", reduce<Op::SumSquare>);
  r.add("ReduceL1", reduce<Op::L1>);
  r.add("ReduceL2", reduce<Op::L2>);
  r.add("ReduceLogSum", reduce<Op::LogSum>);
  r.add("ReduceLogSumExp", reduce<Op::LogSumExp>);
  r.add("CumSum", cumulative<false>);
  r.add("CumProd", cumulative<true>);
}

}  // namespace kiln::kernels
