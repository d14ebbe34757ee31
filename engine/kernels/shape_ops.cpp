// Kernels that compute or change shapes without moving elements (Shape, Size, Reshape, Unsqueeze, Squeeze, Flatten,
// Identity: views of the input's storage, no copy) and the generators (Constant, ConstantOfShape, Range).
// Opset differences (attribute vs input forms) are told apart by what the node carries, so the kernels need no
// opset number.
#include <algorithm>
#include <cmath>

#include "kernels/kernel_util.h"
#include "ir/graph.h"
#include "ir/shape.h"
#include "util/parallel_for.h"

namespace kiln::kernels {
namespace {

Tensor int64Tensor(std::vector<int64_t> dims, const std::vector<int64_t>& values) {
  return Tensor::fromVector(DType::Int64, std::move(dims), values);
}

std::vector<Tensor> shape(const KernelContext& ctx) {
  const auto& dims = ctx.required(0).dims();
  const int64_t rank = static_cast<int64_t>(dims.size());
  // start/end (opset 15) select a range of dims, clamped like a slice.
  auto clampIndex = [rank](int64_t i) { return std::clamp(i < 0 ? i + rank : i, int64_t{0}, rank); };
  const int64_t start = clampIndex(ctx.node().attrInt("start", 0));
  const int64_t end = clampIndex(ctx.node().attrInt("end", rank));
  std::vector<int64_t> picked;
  for (int64_t i = start; i < end; ++i) picked.push_back(dims[static_cast<size_t>(i)]);
  const int64_t n = static_cast<int64_t>(picked.size());
  return {int64Tensor({n}, picked)};
}

std::vector<Tensor> size(const KernelContext& ctx) { return {int64Tensor({}, {ctx.required(0).numel()})}; }

std::vector<Tensor> identity(const KernelContext& ctx) { return {ctx.required(0)}; }

std::vector<Tensor> reshape(const KernelContext& ctx) {
  const Tensor& data = ctx.required(0);
  const std::vector<int64_t> requested = intValues(ctx, ctx.required(1), "shape");
  const bool allowZero = ctx.node().attrInt("allowzero", 0) != 0;
  std::vector<int64_t> dims;
  int64_t inferred = -1;
  bool anyZero = false;
  for (size_t i = 0; i < requested.size(); ++i) {
    int64_t d = requested[i];
    if (d == 0 && !allowZero) {  // 0 copies the input's extent
      if (i >= data.dims().size()) ctx.fail("shape entry 0 at " + std::to_string(i) + " has no input dim to copy");
      d = data.dims()[i];
    } else if (d == -1) {
      if (inferred >= 0) ctx.fail("more than one -1 in shape");
      inferred = static_cast<int64_t>(i);
      d = 1;
    } else if (d < -1) {
      ctx.fail("invalid shape entry " + std::to_string(d));
    }
    anyZero = anyZero || d == 0;
    dims.push_back(d);
  }
  if (allowZero && anyZero && inferred >= 0) ctx.fail("shape has both 0 (allowzero) and -1");
  const std::optional<int64_t> known = checkedProduct(dims);
  if (!known) ctx.fail("shape product overflows");
  if (inferred >= 0) {
    if (*known == 0 || data.numel() % *known != 0)
      ctx.fail("cannot infer -1: " + std::to_string(data.numel()) + " elements into " + std::to_string(*known));
    dims[static_cast<size_t>(inferred)] = data.numel() / *known;
  } else if (*known != data.numel()) {
    ctx.fail("shape holds " + std::to_string(*known) + " elements, input has " + std::to_string(data.numel()));
  }
  return {viewAs(data, std::move(dims))};
}

// Unsqueeze/Squeeze take axes as an attribute before opset 13 and as input 1 from then on.
std::optional<std::vector<int64_t>> axesOf(const KernelContext& ctx) {
  if (hasAttr(ctx.node(), "axes")) return ctx.node().attrInts("axes");
  if (ctx.input(1)) return intValues(ctx, *ctx.input(1), "axes");
  return std::nullopt;
}

std::vector<Tensor> unsqueeze(const KernelContext& ctx) {
  const Tensor& data = ctx.required(0);
  const auto axes = axesOf(ctx);
  if (!axes) ctx.fail("axes are missing");
  const int64_t outRank = static_cast<int64_t>(data.dims().size() + axes->size());
  std::vector<bool> inserted(static_cast<size_t>(outRank), false);
  for (int64_t a : *axes) {
    const int64_t n = normalizeAxis(ctx, a, outRank, "axis");
    if (inserted[static_cast<size_t>(n)]) ctx.fail("axis " + std::to_string(a) + " repeated");
    inserted[static_cast<size_t>(n)] = true;
  }
  std::vector<int64_t> dims;
  size_t next = 0;
  for (int64_t i = 0; i < outRank; ++i) dims.push_back(inserted[static_cast<size_t>(i)] ? 1 : data.dims()[next++]);
  return {viewAs(data, std::move(dims))};
}

std::vector<Tensor> squeeze(const KernelContext& ctx) {
  const Tensor& data = ctx.required(0);
  const int64_t rank = static_cast<int64_t>(data.dims().size());
  std::vector<bool> drop(static_cast<size_t>(rank), false);
  const auto axes = axesOf(ctx);
  if (!axes || axes->empty()) {  // no axes: every extent-1 dim goes
    for (int64_t i = 0; i < rank; ++i) drop[static_cast<size_t>(i)] = data.dims()[static_cast<size_t>(i)] == 1;
  } else {
    for (int64_t a : *axes) {
      const size_t n = static_cast<size_t>(normalizeAxis(ctx, a, rank, "axis"));
      if (drop[n]) ctx.fail("axis " + std::to_string(a) + " repeated");
      if (data.dims()[n] != 1)
        ctx.fail("cannot squeeze axis " + std::to_string(a) + " of extent " + std::to_string(data.dims()[n]));
      drop[n] = true;
    }
  }
  std::vector<int64_t> dims;
  for (size_t i = 0; i < data.dims().size(); ++i)
    if (!drop[i]) dims.push_back(data.dims()[i]);
  return {viewAs(data, std::move(dims))};
}

std::vector<Tensor> flatten(const KernelContext& ctx) {
  const Tensor& data = ctx.required(0);
  const int64_t rank = static_cast<int64_t>(data.dims().size());
  int64_t axis = ctx.node().attrInt("axis", 1);
  if (axis < -rank || axis > rank) ctx.fail("axis " + std::to_string(axis) + " out of range");
  if (axis < 0) axis += rank;
  const auto& d = data.dims();
  const auto outer = checkedProduct(std::vector<int64_t>(d.begin(), d.begin() + axis));
  const auto inner = checkedProduct(std::vector<int64_t>(d.begin() + axis, d.end()));
  return {viewAs(data, {outer.value_or(0), inner.value_or(0)})};
}

std::vector<Tensor> constant(const KernelContext& ctx) {
  const Node& n = ctx.node();
  for (const char* name : {"value", "sparse_value"})  // sparse values arrive densified by the importer
    if (const Attribute* a = n.attr(name))
      if (const Tensor* t = a->get<Tensor>()) return {*t};
  if (n.attr("value_float")) return {Tensor::fromVector<float>(DType::Float, {}, {n.attrFloat("value_float", 0)})};
  if (const Attribute* a = n.attr("value_floats")) {
    const auto* v = a->get<std::vector<float>>();
    if (!v) ctx.fail("value_floats is not a list of floats");
    return {Tensor::fromVector(DType::Float, {static_cast<int64_t>(v->size())}, *v)};
  }
  if (n.attr("value_int")) return {int64Tensor({}, {n.attrInt("value_int", 0)})};
  if (const Attribute* a = n.attr("value_ints")) {
    const auto* v = a->get<std::vector<int64_t>>();
    if (!v) ctx.fail("value_ints is not a list of ints");
    return {int64Tensor({static_cast<int64_t>(v->size())}, *v)};
  }
  if (n.attr("value_string") || n.attr("value_strings")) return {};  // strings are outside the library
  ctx.fail("no value attribute");
}

std::vector<Tensor> constantOfShape(const KernelContext& ctx) {
  const std::vector<int64_t> dims = intValues(ctx, ctx.required(0), "shape");
  Tensor value = Tensor::fromVector<float>(DType::Float, {1}, {0.0f});
  if (const Attribute* a = ctx.node().attr("value")) {
    const Tensor* t = a->get<Tensor>();
    if (!t || t->numel() != 1) ctx.fail("value must be a one-element tensor");
    value = *t;
  }
  if (dtypeSize(value.dtype()) == 0) return {};
  const bool zero = std::all_of(value.bytes().begin(), value.bytes().end(), [](uint8_t b) { return b == 0; });
  // Negative extents and the size limit are checked here; a fill sets every element, so only zeros come zeroed.
  OutBuffer out(ctx, value.dtype(), dims, zero ? HeapStorage::Start::Zeroed : HeapStorage::Start::Unset);
  const size_t elem = value.byteSize();
  const size_t total = static_cast<size_t>(out.numel()) * elem;
  if (!zero && total > 0) {  // each core fills its piece by doubling: log(n) memcpys
    uint8_t* base = out.data();
    const uint8_t* one = value.data();
    parallelFor(static_cast<size_t>(out.numel()), size_t{1} << 16, 1, [&](size_t first, size_t last) {
      uint8_t* piece = base + first * elem;
      const size_t bytes = (last - first) * elem;
      std::memcpy(piece, one, elem);
      for (size_t done = elem; done < bytes; done *= 2) std::memcpy(piece + done, piece, std::min(done, bytes - done));
    });
  }
  return {out.finish()};
}

template <typename C>
int64_t rangeCount(const KernelContext& ctx, C start, C limit, C delta) {
  if (delta == 0) ctx.fail("delta is 0");
  if constexpr (std::is_floating_point_v<C>) {
    const double q = std::ceil((static_cast<double>(limit) - static_cast<double>(start)) / static_cast<double>(delta));
    if (std::isnan(q)) ctx.fail("start, limit or delta is NaN");
    if (q <= 0) return 0;
    if (q >= 9.0e18) throw KernelOutputTooLarge("Range '" + ctx.node().name() + "': too many elements", INT64_MAX);
    return static_cast<int64_t>(q);
  } else {
    int64_t diff;
    if (__builtin_sub_overflow(static_cast<int64_t>(limit), static_cast<int64_t>(start), &diff) ||
        (diff == INT64_MIN && delta == C(-1)))
      throw KernelOutputTooLarge("Range '" + ctx.node().name() + "': too many elements", INT64_MAX);
    const int64_t d = static_cast<int64_t>(delta);
    int64_t q = diff / d;
    if (diff % d != 0 && ((diff < 0) == (d < 0))) ++q;  // ceil of a positive quotient
    return std::max<int64_t>(q, 0);
  }
}

std::vector<Tensor> range(const KernelContext& ctx) {
  const Tensor& s = ctx.required(0);
  const Tensor& l = ctx.required(1);
  const Tensor& d = ctx.required(2);
  if (s.dtype() != l.dtype() || s.dtype() != d.dtype()) ctx.fail("start, limit and delta types differ");
  if (s.numel() != 1 || l.numel() != 1 || d.numel() != 1) ctx.fail("start, limit and delta must be scalars");
  std::vector<Tensor> out;
  dispatch<kFloats | kSigned>(s.dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    using C = ComputeOf<S>;
    const C start = Elem<S>::load(s.data(), 0), limit = Elem<S>::load(l.data(), 0), delta = Elem<S>::load(d.data(), 0);
    OutBuffer buf(ctx, dtypeOf<S>(), {rangeCount(ctx, start, limit, delta)});
    for (int64_t i = 0; i < buf.numel(); ++i) {
      // start + i * delta (not a running sum, which would accumulate rounding).
      if constexpr (std::is_floating_point_v<C>)
        Elem<S>::store(
            buf.data(), i,
            static_cast<C>(static_cast<double>(start) + static_cast<double>(i) * static_cast<double>(delta)));
      else
        Elem<S>::store(buf.data(), i, static_cast<C>(wrapAdd<int64_t>(start, wrapMul<int64_t>(i, delta))));
    }
    out.push_back(buf.finish());
  });
  return out;
}

}  // namespace

void registerShapeKernels(KernelRegistry& r) {
  r.add("Shape", shape);
  r.add("Size", size);
  r.add("Identity", identity);
  r.add("Reshape", reshape);
  r.add("Unsqueeze", unsqueeze);
  r.add("Squeeze", squeeze);
  r.add("Flatten", flatten);
  r.add("Constant", constant);
  r.add("ConstantOfShape", constantOfShape);
  r.add("Range", range);
}

}  // namespace kiln::kernels
