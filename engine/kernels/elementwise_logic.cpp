// Comparison, logical and selection kernels (Equal, Less..., Not/And/Or/Xor, Where), numpy broadcasting.
// Comparisons of fp16/bf16 happen in float, which is exact for them.
#include "kernels/kernel_util.h"
#include "ir/graph.h"

namespace kiln::kernels {
namespace {

template <unsigned Set, typename Fn>
std::vector<Tensor> compare(const KernelContext& ctx, Fn fn) {
  const Tensor& a = ctx.required(0);
  const Tensor& b = ctx.required(1);
  if (a.dtype() != b.dtype()) ctx.fail("input element types differ");
  std::vector<Tensor> out;
  dispatch<Set>(a.dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    using C = ComputeOf<S>;
    out.push_back(mapBinary<S, S, bool>(ctx, a, b, [&](C x, C y) { return fn(x, y); }));
  });
  return out;
}

std::vector<Tensor> equal(const KernelContext& c) {
  return compare<kAll>(c, [](auto x, auto y) { return x == y; });
}
std::vector<Tensor> less(const KernelContext& c) {
  return compare<kNumeric>(c, [](auto x, auto y) { return x < y; });
}
std::vector<Tensor> greater(const KernelContext& c) {
  return compare<kNumeric>(c, [](auto x, auto y) { return x > y; });
}
std::vector<Tensor> lessOrEqual(const KernelContext& c) {
  return compare<kNumeric>(c, [](auto x, auto y) { return x <= y; });
}
std::vector<Tensor> greaterOrEqual(const KernelContext& c) {
  return compare<kNumeric>(c, [](auto x, auto y) { return x >= y; });
}
std::vector<Tensor> logicalAnd(const KernelContext& c) {
  return compare<kBool>(c, [](bool x, bool y) { return x && y; });
}
std::vector<Tensor> logicalOr(const KernelContext& c) {
  return compare<kBool>(c, [](bool x, bool y) { return x || y; });
}
std::vector<Tensor> logicalXor(const KernelContext& c) {
  return compare<kBool>(c, [](bool x, bool y) { return x != y; });
}

std::vector<Tensor> logicalNot(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  if (x.dtype() != DType::Bool) return {};
  return {mapUnary<bool, bool>(ctx, x, [](bool v) { return !v; })};
}

// Where(condition, X, Y): the three broadcast together; elements are copied as bytes, so every type works.
std::vector<Tensor> where(const KernelContext& ctx) {
  const Tensor& cond = ctx.required(0);
  const Tensor& x = ctx.required(1);
  const Tensor& y = ctx.required(2);
  if (cond.dtype() != DType::Bool) ctx.fail("condition must be bool");
  if (x.dtype() != y.dtype()) ctx.fail("X and Y element types differ");
  const std::vector<const std::vector<int64_t>*> shapes{&cond.dims(), &x.dims(), &y.dims()};
  OutBuffer out(ctx, x.dtype(), broadcastShapes(ctx, shapes));
  BroadcastWalker w(out.dims(), shapes);
  const int64_t size = dtypeSize(x.dtype());
  for (int64_t i = 0; i < out.numel(); ++i, w.next()) {
    const bool pickX = cond.data()[w.offset(0)] != 0;
    const uint8_t* src = pickX ? x.data() + w.offset(1) * size : y.data() + w.offset(2) * size;
    copyElement(out.data() + i * size, src, static_cast<size_t>(size));
  }
  return {out.finish()};
}

}  // namespace

void registerElementwiseLogicKernels(KernelRegistry& r) {
  r.add("Equal", equal);
  r.add("Less", less);
  r.add("Greater", greater);
  r.add("LessOrEqual", lessOrEqual);
  r.add("GreaterOrEqual", greaterOrEqual);
  r.add("And", logicalAnd);
  r.add("Or", logicalOr);
  r.add("Xor", logicalXor);
  r.add("Not", logicalNot);
  r.add("Where", where);
}

}  // namespace kiln::kernels
