// Kernels that compute indices from values or values from indices: ArgMax, ArgMin, TopK, NonZero, OneHot.
// Orderings treat NaN as above every number (see totalLess), so ties and NaNs give one well-defined answer: the lower
// index wins a tie unless select_last_index asks for the higher one.
#include <algorithm>
#include <numeric>

#include "kernels/kernel_util.h"
#include "ir/graph.h"

namespace kiln::kernels {
namespace {

// A tensor seen as [outer, n, inner] around one axis.
struct AxisSplit {
  int64_t outer = 1, n = 1, inner = 1;
};
AxisSplit splitAt(const std::vector<int64_t>& dims, size_t axis) {
  AxisSplit s;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (d < axis) s.outer *= dims[d];
    if (d == axis) s.n = dims[d];
    if (d > axis) s.inner *= dims[d];
  }
  return s;
}

template <bool Max>
std::vector<Tensor> argExtreme(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  const int64_t rank = static_cast<int64_t>(x.dims().size());
  const size_t axis = static_cast<size_t>(normalizeAxis(ctx, ctx.node().attrInt("axis", 0), rank, "axis"));
  const bool keepDims = ctx.node().attrInt("keepdims", 1) != 0;
  const bool last = ctx.node().attrInt("select_last_index", 0) != 0;
  const AxisSplit s = splitAt(x.dims(), axis);
  if (s.n == 0) ctx.fail("cannot take the arg extremum of an empty axis");
  std::vector<int64_t> dims = x.dims();
  if (keepDims)
    dims[axis] = 1;
  else
    dims.erase(dims.begin() + static_cast<int64_t>(axis));
  std::vector<Tensor> out;
  dispatch<kNumeric>(x.dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    OutBuffer o(ctx, DType::Int64, dims);
    for (int64_t a = 0; a < s.outer; ++a)
      for (int64_t b = 0; b < s.inner; ++b) {
        const int64_t base = a * s.n * s.inner + b;
        int64_t best = 0;
        auto bestV = Elem<S>::load(x.data(), base);
        for (int64_t k = 1; k < s.n; ++k) {
          const auto v = Elem<S>::load(x.data(), base + k * s.inner);
          const bool better = Max ? totalLess(bestV, v) : totalLess(v, bestV);
          if (better || (last && totalEqual(v, bestV))) {
            best = k;
            bestV = v;
          }
        }
        Elem<int64_t>::store(o.data(), a * s.inner + b, best);
      }
    out.push_back(o.finish());
  });
  return out;
}

// TopK(X, K) -> (Values, Indices): the K largest (or smallest) along axis, in order; equal values keep index order.
std::vector<Tensor> topK(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  const Node& node = ctx.node();
  int64_t k = node.attrInt("k", -1);  // opset 1
  if (const Tensor* kt = ctx.input(1)) {
    const std::vector<int64_t> kv = intValues(ctx, *kt, "K");
    if (kv.size() != 1) ctx.fail("K must hold one value");
    k = kv[0];
  }
  const int64_t rank = static_cast<int64_t>(x.dims().size());
  const size_t axis = static_cast<size_t>(normalizeAxis(ctx, node.attrInt("axis", -1), rank, "axis"));
  const bool largest = node.attrInt("largest", 1) != 0;
  const AxisSplit s = splitAt(x.dims(), axis);
  if (k < 0 || k > s.n) ctx.fail("K " + std::to_string(k) + " is outside [0, " + std::to_string(s.n) + "]");
  if (node.numOutputs() != 2) ctx.fail("TopK has two outputs");
  std::vector<int64_t> dims = x.dims();
  dims[axis] = k;
  std::vector<Tensor> out;
  dispatch<kNumeric>(x.dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    using C = ComputeOf<S>;
    OutBuffer values(ctx, x.dtype(), dims);
    OutBuffer indices(ctx, DType::Int64, dims);
    checkScratch(ctx, s.n, sizeof(int64_t) + sizeof(C));
    std::vector<int64_t> order(static_cast<size_t>(s.n));
    std::vector<C> row(static_cast<size_t>(s.n));
    for (int64_t a = 0; a < s.outer && k > 0; ++a)
      for (int64_t b = 0; b < s.inner; ++b) {
        const int64_t base = a * s.n * s.inner + b;
        for (int64_t i = 0; i < s.n; ++i) row[static_cast<size_t>(i)] = Elem<S>::load(x.data(), base + i * s.inner);
        std::iota(order.begin(), order.end(), 0);
        // (value, index) is a strict total order, so the first K are unique and ties resolve to the lower index.
        const auto before = [&](int64_t i, int64_t j) {
          const C vi = row[static_cast<size_t>(i)], vj = row[static_cast<size_t>(j)];
          if (totalEqual(vi, vj)) return i < j;
          return largest ? totalLess(vj, vi) : totalLess(vi, vj);
        };
        std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
        for (int64_t j = 0; j < k; ++j) {
          const int64_t at = (a * k + j) * s.inner + b;
          const int64_t src = order[static_cast<size_t>(j)];
          Elem<S>::store(values.data(), at, row[static_cast<size_t>(src)]);
          Elem<int64_t>::store(indices.data(), at, src);
        }
      }
    out.push_back(values.finish());
    out.push_back(indices.finish());
  });
  return out;
}

// NonZero: the coordinates of the non-zero elements as [rank, count], in row-major order (a scalar counts as [1]).
std::vector<Tensor> nonZero(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  std::vector<int64_t> dims = x.dims();
  if (dims.empty()) dims.push_back(1);
  std::vector<Tensor> out;
  dispatch<kAll>(x.dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    using C = ComputeOf<S>;
    int64_t count = 0;
    for (int64_t i = 0; i < x.numel(); ++i)
      if (Elem<S>::load(x.data(), i) != C(0)) ++count;
    OutBuffer o(ctx, DType::Int64, {static_cast<int64_t>(dims.size()), count});
    int64_t j = 0;
    for (int64_t i = 0; i < x.numel(); ++i) {
      if (Elem<S>::load(x.data(), i) == C(0)) continue;
      int64_t rest = i;
      for (size_t d = dims.size(); d-- > 0;) {
        Elem<int64_t>::store(o.data(), static_cast<int64_t>(d) * count + j, rest % dims[d]);
        rest /= dims[d];
      }
      ++j;
    }
    out.push_back(o.finish());
  });
  return out;
}

// A numeric tensor's values as int64, float values truncated (saturating, NaN -> 0) without undefined behaviour.
std::vector<int64_t> asIndices(const KernelContext& ctx, const Tensor& t, const char* what) {
  if (isInteger(t.dtype())) return t.toInt64();
  if (!isFloating(t.dtype())) ctx.fail(std::string(what) + " must be numeric");
  std::vector<int64_t> v;
  for (double d : t.toDouble()) v.push_back(floatToInt<int64_t>(d));
  return v;
}

// OneHot(indices, depth, values=[off, on]): a new axis of extent depth holding `on` at each index, `off` elsewhere.
// Indices in [-depth, -1] count from the end; indices outside [-depth, depth-1] give an all-off row, as specified.
std::vector<Tensor> oneHot(const KernelContext& ctx) {
  const Tensor& indices = ctx.required(0);
  const Tensor& depthT = ctx.required(1);
  const Tensor& values = ctx.required(2);
  if (depthT.numel() != 1) ctx.fail("depth must be a scalar");
  if (values.numel() != 2) ctx.fail("values must be [off_value, on_value]");
  checkScratch(ctx, indices.numel(), sizeof(int64_t));
  const int64_t depth = asIndices(ctx, depthT, "depth")[0];
  if (depth < 1) ctx.fail("depth must be positive");
  const std::vector<int64_t> idx = asIndices(ctx, indices, "indices");
  const int64_t outRank = static_cast<int64_t>(indices.dims().size()) + 1;
  const size_t axis = static_cast<size_t>(normalizeAxis(ctx, ctx.node().attrInt("axis", -1), outRank, "axis"));
  std::vector<int64_t> dims = indices.dims();
  dims.insert(dims.begin() + static_cast<int64_t>(axis), depth);
  OutBuffer o(ctx, values.dtype(), dims);
  const size_t size = static_cast<size_t>(dtypeSize(values.dtype()));
  for (int64_t i = 0; i < o.numel(); ++i) copyElement(o.data() + i * static_cast<int64_t>(size), values.data(), size);
  const AxisSplit s = splitAt(dims, axis);  // outer = indices dims before axis, inner = after
  for (int64_t a = 0; a < s.outer; ++a)
    for (int64_t b = 0; b < s.inner; ++b) {
      int64_t i = idx[static_cast<size_t>(a * s.inner + b)];
      if (i < -depth || i >= depth) continue;
      if (i < 0) i += depth;
      copyElement(o.data() + ((a * depth + i) * s.inner + b) * static_cast<int64_t>(size), values.data() + size, size);
    }
  return {o.finish()};
}

}  // namespace

void registerIndexingKernels(KernelRegistry& r) {
  r.add("ArgMax", argExtreme<true>);
  r.add("ArgMin", argExtreme<false>);
  r.add("TopK", topK);
  r.add("NonZero", nonZero);
  r.add("OneHot", oneHot);
}

}  // namespace kiln::kernels
