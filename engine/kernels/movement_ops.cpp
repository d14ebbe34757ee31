// Kernels that move elements without looking at their values: Concat, Split, Slice, Gather, GatherElements,
// Transpose, Expand, Tile. They copy element bytes, so every fixed-size element type works the same way.
#include <algorithm>
#include <numeric>

#include "kernels/kernel_util.h"
#include "ir/graph.h"
#include "ir/shape.h"

namespace kiln::kernels {
namespace {

int64_t elemSize(const Tensor& t) { return dtypeSize(t.dtype()); }

int64_t productOf(const std::vector<int64_t>& dims, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= dims[i];  // sub-products of a valid tensor's dims cannot overflow
  return p;
}

std::vector<Tensor> concat(const KernelContext& ctx) {
  if (ctx.numInputs() == 0) ctx.fail("needs at least one input");
  if (!hasAttr(ctx.node(), "axis")) ctx.fail("axis is missing");
  const Tensor& first = ctx.required(0);
  const int64_t rank = static_cast<int64_t>(first.dims().size());
  if (rank == 0) ctx.fail("cannot concatenate scalars");
  const size_t axis = static_cast<size_t>(normalizeAxis(ctx, ctx.node().attrInt("axis", 0), rank, "axis"));
  std::vector<int64_t> dims = first.dims();
  dims[axis] = 0;
  for (size_t k = 0; k < ctx.numInputs(); ++k) {
    const Tensor& t = ctx.required(k);
    if (t.dtype() != first.dtype()) ctx.fail("input element types differ");
    if (t.dims().size() != first.dims().size()) ctx.fail("input ranks differ");
    for (size_t d = 0; d < dims.size(); ++d)
      if (d != axis && t.dims()[d] != first.dims()[d])
        ctx.fail("input " + std::to_string(k) + " has another extent at dim " + std::to_string(d));
    if (__builtin_add_overflow(dims[axis], t.dims()[axis], &dims[axis])) ctx.fail("concatenated extent overflows");
  }
  OutBuffer out(ctx, first.dtype(), dims);
  const int64_t outer = productOf(dims, 0, axis);
  const int64_t inner = productOf(dims, axis + 1, dims.size()) * elemSize(first);
  uint8_t* dst = out.data();
  for (int64_t o = 0; o < outer; ++o)
    for (size_t k = 0; k < ctx.numInputs(); ++k) {
      const Tensor& t = ctx.required(k);
      const int64_t block = t.dims()[axis] * inner;
      if (block == 0) continue;
      std::memcpy(dst, t.data() + o * block, static_cast<size_t>(block));
      dst += block;
    }
  return {out.finish()};
}

std::vector<Tensor> split(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  const int64_t rank = static_cast<int64_t>(x.dims().size());
  if (rank == 0) ctx.fail("cannot split a scalar");
  const size_t axis = static_cast<size_t>(normalizeAxis(ctx, ctx.node().attrInt("axis", 0), rank, "axis"));
  const int64_t dim = x.dims()[axis];
  const int64_t n = static_cast<int64_t>(ctx.node().numOutputs());
  if (n == 0) ctx.fail("no outputs");
  std::vector<int64_t> sizes;
  if (ctx.input(1)) {  // opset >= 13
    sizes = intValues(ctx, *ctx.input(1), "split");
  } else if (hasAttr(ctx.node(), "split")) {  // opset < 13
    sizes = ctx.node().attrInts("split");
  } else if (hasAttr(ctx.node(), "num_outputs")) {  // opset 18: ceil-sized chunks, the last one smaller
    const int64_t chunk = (dim + n - 1) / n;
    for (int64_t i = 0; i < n; ++i) sizes.push_back(std::clamp<int64_t>(dim - i * chunk, 0, chunk));
  } else {
    if (dim % n != 0)
      ctx.fail("extent " + std::to_string(dim) + " does not split into " + std::to_string(n) + " equal parts");
    sizes.assign(static_cast<size_t>(n), dim / n);
  }
  if (static_cast<int64_t>(sizes.size()) != n)
    ctx.fail("split has " + std::to_string(sizes.size()) + " entries for " + std::to_string(n) + " outputs");
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0) ctx.fail("negative split size");
    if (__builtin_add_overflow(total, s, &total)) ctx.fail("split sizes overflow");
  }
  if (total != dim) ctx.fail("split sizes sum to " + std::to_string(total) + ", extent is " + std::to_string(dim));
  const int64_t outer = productOf(x.dims(), 0, axis);
  const int64_t inner = productOf(x.dims(), axis + 1, x.dims().size()) * elemSize(x);
  std::vector<Tensor> outs;
  int64_t offset = 0;
  for (int64_t s : sizes) {
    std::vector<int64_t> dims = x.dims();
    dims[axis] = s;
    OutBuffer out(ctx, x.dtype(), dims);
    for (int64_t o = 0; o < outer && s > 0 && inner > 0; ++o)
      std::memcpy(out.data() + o * s * inner, x.data() + (o * dim + offset) * inner, static_cast<size_t>(s * inner));
    offset += s;
    outs.push_back(out.finish());
  }
  return outs;
}

std::vector<Tensor> slice(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  const Node& node = ctx.node();
  const int64_t rank = static_cast<int64_t>(x.dims().size());
  std::vector<int64_t> starts, ends, axes, steps;
  if (hasAttr(node, "starts")) {  // opset < 10: attributes, no steps
    starts = node.attrInts("starts");
    ends = node.attrInts("ends");
    if (hasAttr(node, "axes")) axes = node.attrInts("axes");
  } else {
    starts = intValues(ctx, ctx.required(1), "starts");
    ends = intValues(ctx, ctx.required(2), "ends");
    if (ctx.input(3)) axes = intValues(ctx, *ctx.input(3), "axes");
    if (ctx.input(4)) steps = intValues(ctx, *ctx.input(4), "steps");
  }
  if (axes.empty()) {
    axes.resize(starts.size());
    std::iota(axes.begin(), axes.end(), 0);
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    ctx.fail("starts, ends, axes and steps differ in length");

  std::vector<int64_t> begin(x.dims().size(), 0), step(x.dims().size(), 1), count = x.dims();
  std::vector<bool> seen(x.dims().size(), false);
  for (size_t k = 0; k < starts.size(); ++k) {
    const size_t a = static_cast<size_t>(normalizeAxis(ctx, axes[k], rank, "axis"));
    if (seen[a]) ctx.fail("axis " + std::to_string(axes[k]) + " repeated");
    seen[a] = true;
    const int64_t dim = x.dims()[a], st = steps[k];
    if (st == 0) ctx.fail("step is 0");
    int64_t s = starts[k] < 0 ? starts[k] + dim : starts[k];
    int64_t e = ends[k] < 0 ? ends[k] + dim : ends[k];
    // Clamp as the spec says: [0, dim] going forward, [-1, dim-1] going backward (-1 = before the first element).
    if (st > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
    } else {
      s = std::clamp<int64_t>(s, -1, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
    }
    const uint64_t span = st > 0 ? (e > s ? uint64_t(e - s) : 0) : (s > e ? uint64_t(s - e) : 0);
    const uint64_t stride = st > 0 ? uint64_t(st) : uint64_t(-(st + 1)) + 1;  // |step| without overflow
    count[a] = span ? static_cast<int64_t>((span - 1) / stride + 1) : 0;
    begin[a] = s;
    step[a] = st;
  }
  OutBuffer out(ctx, x.dtype(), count);
  if (out.numel() == 0) return {out.finish()};
  const std::vector<int64_t> strides = stridesOf(x.dims());
  int64_t base = 0;
  std::vector<int64_t> walk(strides.size());
  for (size_t d = 0; d < strides.size(); ++d) {
    base += begin[d] * strides[d];
    walk[d] = step[d] * strides[d];  // |step| > extent only occurs with count 1, where the product is unused...
    if (count[d] == 1) walk[d] = 0;  // ...so drop it rather than risk an overflow
  }
  stridedCopy(out, x, count, walk, base);
  return {out.finish()};
}

std::vector<int64_t> checkedIndices(const KernelContext& ctx, const Tensor& indices, int64_t extent) {
  std::vector<int64_t> idx = intValues(ctx, indices, "indices");
  for (int64_t& i : idx) {
    if (i < -extent || i >= extent)
      ctx.fail("index " + std::to_string(i) + " out of range for extent " + std::to_string(extent));
    if (i < 0) i += extent;
  }
  return idx;
}

std::vector<Tensor> gather(const KernelContext& ctx) {
  const Tensor& data = ctx.required(0);
  const Tensor& indices = ctx.required(1);
  const int64_t rank = static_cast<int64_t>(data.dims().size());
  if (rank == 0) ctx.fail("data must have rank >= 1");
  const size_t axis = static_cast<size_t>(normalizeAxis(ctx, ctx.node().attrInt("axis", 0), rank, "axis"));
  const int64_t dim = data.dims()[axis];
  const std::vector<int64_t> idx = checkedIndices(ctx, indices, dim);
  std::vector<int64_t> dims(data.dims().begin(), data.dims().begin() + static_cast<int64_t>(axis));
  dims.insert(dims.end(), indices.dims().begin(), indices.dims().end());
  dims.insert(dims.end(), data.dims().begin() + static_cast<int64_t>(axis) + 1, data.dims().end());
  OutBuffer out(ctx, data.dtype(), dims);
  const int64_t outer = productOf(data.dims(), 0, axis);
  const int64_t inner = productOf(data.dims(), axis + 1, data.dims().size()) * elemSize(data);
  uint8_t* dst = out.data();
  if (inner == 0) return {out.finish()};
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i : idx) {
      std::memcpy(dst, data.data() + (o * dim + i) * inner, static_cast<size_t>(inner));
      dst += inner;
    }
  return {out.finish()};
}

std::vector<Tensor> gatherElements(const KernelContext& ctx) {
  const Tensor& data = ctx.required(0);
  const Tensor& indices = ctx.required(1);
  const int64_t rank = static_cast<int64_t>(data.dims().size());
  if (rank == 0 || indices.dims().size() != data.dims().size())
    ctx.fail("data and indices must have the same rank >= 1");
  const size_t axis = static_cast<size_t>(normalizeAxis(ctx, ctx.node().attrInt("axis", 0), rank, "axis"));
  for (size_t d = 0; d < data.dims().size(); ++d)
    if (d != axis && indices.dims()[d] > data.dims()[d])
      ctx.fail("indices extent exceeds data at dim " + std::to_string(d));
  const std::vector<int64_t> idx = checkedIndices(ctx, indices, data.dims()[axis]);
  std::vector<int64_t> strides = stridesOf(data.dims());
  const int64_t axisStride = strides[axis];
  strides[axis] = 0;  // the walk covers the other dims; the index supplies the position along axis
  OutBuffer out(ctx, data.dtype(), indices.dims());
  const int64_t size = elemSize(data);
  StrideWalker w(indices.dims(), {strides});
  for (int64_t i = 0; i < out.numel(); ++i, w.next())
    copyElement(out.data() + i * size, data.data() + (w.offset(0) + idx[static_cast<size_t>(i)] * axisStride) * size,
                static_cast<size_t>(size));
  return {out.finish()};
}

std::vector<Tensor> transpose(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  const size_t rank = x.dims().size();
  std::vector<int64_t> perm = ctx.node().attrInts("perm");
  if (!hasAttr(ctx.node(), "perm")) {
    perm.resize(rank);
    std::iota(perm.rbegin(), perm.rend(), 0);  // default: reverse the dims
  }
  if (perm.size() != rank)
    ctx.fail("perm has " + std::to_string(perm.size()) + " entries for rank " + std::to_string(rank));
  std::vector<bool> used(rank, false);
  const std::vector<int64_t> strides = stridesOf(x.dims());
  std::vector<int64_t> dims(rank), walk(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t p = perm[i];
    if (p < 0 || p >= static_cast<int64_t>(rank) || used[static_cast<size_t>(p)]) ctx.fail("perm is not a permutation");
    used[static_cast<size_t>(p)] = true;
    dims[i] = x.dims()[static_cast<size_t>(p)];
    walk[i] = strides[static_cast<size_t>(p)];
  }
  OutBuffer out(ctx, x.dtype(), dims);
  stridedCopy(out, x, dims, walk);
  return {out.finish()};
}

std::vector<Tensor> expand(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  const std::vector<int64_t> shape = intValues(ctx, ctx.required(1), "shape");
  for (int64_t d : shape)
    if (d < 0) ctx.fail("negative extent in shape");
  const std::vector<int64_t> dims = broadcastShapes(ctx, {&x.dims(), &shape});
  OutBuffer out(ctx, x.dtype(), dims);
  stridedCopy(out, x, dims, broadcastStrides(dims, x.dims()));
  return {out.finish()};
}

std::vector<Tensor> tile(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  const std::vector<int64_t> repeats = intValues(ctx, ctx.required(1), "repeats");
  if (repeats.size() != x.dims().size()) ctx.fail("repeats must have one entry per dim");
  // Output dim d is (repeat, position) in row-major order: walk [r0, d0, r1, d1, ...] with strides [0, s0, 0, s1...].
  std::vector<int64_t> dims, walkDims, walk;
  const std::vector<int64_t> strides = stridesOf(x.dims());
  for (size_t d = 0; d < repeats.size(); ++d) {
    if (repeats[d] < 0) ctx.fail("negative repeat");
    const auto extent = checkedMul(x.dims()[d], repeats[d]);
    if (!extent) throw KernelOutputTooLarge("Tile '" + ctx.node().name() + "': output size overflows", INT64_MAX);
    dims.push_back(*extent);
    walkDims.insert(walkDims.end(), {repeats[d], x.dims()[d]});
    walk.insert(walk.end(), {0, strides[d]});
  }
  OutBuffer out(ctx, x.dtype(), dims);
  stridedCopy(out, x, walkDims, walk);
  return {out.finish()};
}

}  // namespace

void registerMovementKernels(KernelRegistry& r) {
  r.add("Concat", concat);
  r.add("Split", split);
  r.add("Slice", slice);
  r.add("Gather", gather);
  r.add("GatherElements", gatherElements);
  r.add("Transpose", transpose);
  r.add("Expand", expand);
  r.add("Tile", tile);
}

}  // namespace kiln::kernels
