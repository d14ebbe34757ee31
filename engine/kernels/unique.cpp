// Unique(X) -> (Y, indices, inverse_indices, counts). Without axis the items are X's elements (flattened); with axis
// they are the slices along it, compared lexicographically. sorted=1 orders Y ascending, sorted=0 by first occurrence.
// NaNs compare equal to each other and above every number, so they form one group at the end.
#include <algorithm>
#include <numeric>

#include "kernels/kernel_util.h"
#include "ir/graph.h"

namespace kiln::kernels {
namespace {

template <typename S>
void uniqueTyped(const KernelContext& ctx, const Tensor& x, std::vector<int64_t> dims, size_t axis,
                 std::vector<Tensor>& result) {
  using C = ComputeOf<S>;
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (d < axis) outer *= dims[d];
    if (d > axis) inner *= dims[d];
  }
  const int64_t n = dims[axis];
  // Item i is the slice x[o, i, j] for all (o, j), read in row-major order.
  const auto elem = [&](int64_t i, int64_t o, int64_t j) { return Elem<S>::load(x.data(), (o * n + i) * inner + j); };
  const auto compare = [&](int64_t a, int64_t b) {  // <0, 0, >0
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < inner; ++j) {
        const C va = elem(a, o, j), vb = elem(b, o, j);
        if (totalLess(va, vb)) return -1;
        if (totalLess(vb, va)) return 1;
      }
    return 0;
  };
  checkScratch(ctx, n, 4 * sizeof(int64_t));
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  // Stable, so each group of equal items starts with its first occurrence.
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return compare(a, b) < 0; });
  std::vector<int64_t> groupOf(static_cast<size_t>(n)), firsts, counts;
  for (size_t k = 0; k < order.size(); ++k) {
    if (k == 0 || compare(order[k - 1], order[k]) != 0) {
      firsts.push_back(order[k]);
      counts.push_back(0);
    }
    groupOf[static_cast<size_t>(order[k])] = static_cast<int64_t>(firsts.size()) - 1;
    ++counts.back();
  }
  // Output position of each group: ascending as found, or by first occurrence when unsorted.
  const size_t groups = firsts.size();
  std::vector<int64_t> rank(groups);
  std::iota(rank.begin(), rank.end(), 0);
  if (ctx.node().attrInt("sorted", 1) == 0) {
    std::vector<int64_t> byFirst(groups);
    std::iota(byFirst.begin(), byFirst.end(), 0);
    std::sort(byFirst.begin(), byFirst.end(),
              [&](int64_t a, int64_t b) { return firsts[static_cast<size_t>(a)] < firsts[static_cast<size_t>(b)]; });
    for (size_t p = 0; p < groups; ++p) rank[static_cast<size_t>(byFirst[p])] = static_cast<int64_t>(p);
  }
  const int64_t u = static_cast<int64_t>(groups);
  dims[axis] = u;
  OutBuffer y(ctx, x.dtype(), dims);
  OutBuffer indices(ctx, DType::Int64, {u}), inverse(ctx, DType::Int64, {n}), count(ctx, DType::Int64, {u});
  for (size_t g = 0; g < groups; ++g) {
    const int64_t p = rank[g];
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < inner; ++j) Elem<S>::store(y.data(), (o * u + p) * inner + j, elem(firsts[g], o, j));
    Elem<int64_t>::store(indices.data(), p, firsts[g]);
    Elem<int64_t>::store(count.data(), p, counts[g]);
  }
  for (int64_t i = 0; i < n; ++i)
    Elem<int64_t>::store(inverse.data(), i, rank[static_cast<size_t>(groupOf[static_cast<size_t>(i)])]);
  Tensor all[] = {y.finish(), indices.finish(), inverse.finish(), count.finish()};
  result.assign(all, all + ctx.node().numOutputs());
}

std::vector<Tensor> unique(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  const size_t outputs = ctx.node().numOutputs();
  if (outputs < 1 || outputs > 4) ctx.fail("Unique has one to four outputs");
  std::vector<int64_t> dims{x.numel()};
  size_t axis = 0;
  if (hasAttr(ctx.node(), "axis")) {
    dims = x.dims();
    axis = static_cast<size_t>(
        normalizeAxis(ctx, ctx.node().attrInt("axis", 0), static_cast<int64_t>(dims.size()), "axis"));
  }
  std::vector<Tensor> result;
  dispatch<kAll>(x.dtype(), [&](auto tag) { uniqueTyped<typename decltype(tag)::type>(ctx, x, dims, axis, result); });
  return result;
}

}  // namespace

void registerUniqueKernels(KernelRegistry& r) { r.add("Unique", unique); }

}  // namespace kiln::kernels
