// Index-driven writes and reads: ScatterElements (and its deprecated alias Scatter), ScatterND, GatherND, MaxUnpool.
// Every index is checked against its extent (negative ones count from the end) before anything is written; updates
// apply in index order, so with duplicate indices and reduction "none" the last write wins.
#include <algorithm>
#include <optional>

#include "kernels/kernel_util.h"
#include "ir/graph.h"
#include "ir/shape.h"

namespace kiln::kernels {
namespace {

enum class Reduction { None, Add, Mul, Max, Min };

Reduction reductionOf(const KernelContext& ctx) {
  const std::string r = ctx.node().attrString("reduction", "none");
  if (r == "none") return Reduction::None;
  if (r == "add") return Reduction::Add;
  if (r == "mul") return Reduction::Mul;
  if (r == "max") return Reduction::Max;
  if (r == "min") return Reduction::Min;
  ctx.fail("unknown reduction '" + r + "'");
}

int64_t checkedIndex(const KernelContext& ctx, int64_t i, int64_t extent) {
  if (i < -extent || i >= extent)
    ctx.fail("index " + std::to_string(i) + " out of range for extent " + std::to_string(extent));
  return i < 0 ? i + extent : i;
}

// Writes element `src` of `updates` into element `dst` of `out` (already a copy of data) with the reduction.
// Copies bytes for "none" (any element type); reductions need arithmetic and run on numeric types only.
class Writer {
 public:
  Writer(const Tensor& data, Reduction r) : r_(r), size_(dtypeSize(data.dtype())), type_(data.dtype()) {}
  // Whether the reduction has a meaning for the element type (bool and the like only take "none").
  bool supported() const { return r_ == Reduction::None || dispatch<kNumeric>(type_, [](auto) {}); }
  void write(uint8_t* out, int64_t dst, const uint8_t* updates, int64_t src) const {
    if (r_ == Reduction::None) {
      copyElement(out + dst * size_, updates + src * size_, static_cast<size_t>(size_));
      return;
    }
    dispatch<kNumeric>(type_, [&](auto tag) {
      using S = typename decltype(tag)::type;
      using C = ComputeOf<S>;
      const C a = Elem<S>::load(out, dst), b = Elem<S>::load(updates, src);
      C v = a;
      if (r_ == Reduction::Add) v = static_cast<C>(wrapAdd(a, b));
      if (r_ == Reduction::Mul) v = static_cast<C>(wrapMul(a, b));
      if (r_ == Reduction::Max) v = b > a ? b : a;
      if (r_ == Reduction::Min) v = b < a ? b : a;
      Elem<S>::store(out, dst, v);
    });
  }

 private:
  Reduction r_;
  int64_t size_;
  DType type_;
};

// A fresh copy of data to scatter into.
OutBuffer copyOf(const KernelContext& ctx, const Tensor& data) {
  OutBuffer out(ctx, data.dtype(), data.dims());
  if (data.byteSize() > 0) std::memcpy(out.data(), data.data(), data.byteSize());
  return out;
}

std::vector<Tensor> scatterElements(const KernelContext& ctx) {
  const Tensor& data = ctx.required(0);
  const Tensor& indices = ctx.required(1);
  const Tensor& updates = ctx.required(2);
  const int64_t rank = static_cast<int64_t>(data.dims().size());
  if (rank == 0) ctx.fail("data must have rank >= 1");
  if (indices.dims().size() != data.dims().size()) ctx.fail("indices must have data's rank");
  if (updates.dims() != indices.dims()) ctx.fail("updates must have the shape of indices");
  if (updates.dtype() != data.dtype()) ctx.fail("updates must have data's element type");
  const size_t axis = static_cast<size_t>(normalizeAxis(ctx, ctx.node().attrInt("axis", 0), rank, "axis"));
  for (size_t d = 0; d < data.dims().size(); ++d)
    if (d != axis && indices.dims()[d] > data.dims()[d])
      ctx.fail("indices extent exceeds data at dim " + std::to_string(d));
  const Writer writer(data, reductionOf(ctx));
  if (!writer.supported()) return {};
  checkScratch(ctx, indices.numel(), sizeof(int64_t));
  std::vector<int64_t> idx = intValues(ctx, indices, "indices");
  for (int64_t& i : idx) i = checkedIndex(ctx, i, data.dims()[axis]);
  OutBuffer out = copyOf(ctx, data);
  std::vector<int64_t> strides = stridesOf(data.dims());
  const int64_t axisStride = strides[axis];
  strides[axis] = 0;  // the walk covers the other dims; the index supplies the position along axis
  StrideWalker w(indices.dims(), {strides});
  for (int64_t i = 0; i < indices.numel(); ++i, w.next())
    writer.write(out.data(), w.offset(0) + idx[static_cast<size_t>(i)] * axisStride, updates.data(), i);
  return {out.finish()};
}

// Shared by ScatterND and GatherND: indices [..., k] address slices of data[prefix] of `slice` elements each.
struct NdPlan {
  int64_t k = 0;       // index tuple length
  int64_t tuples = 0;  // number of index tuples
  int64_t slice = 1;   // elements per addressed slice
};

NdPlan ndPlan(const KernelContext& ctx, const Tensor& data, const Tensor& indices, size_t batchDims) {
  if (indices.dims().empty()) ctx.fail("indices must have rank >= 1");
  NdPlan p;
  p.k = indices.dims().back();
  if (p.k < 1 || p.k > static_cast<int64_t>(data.dims().size() - batchDims))
    ctx.fail("index tuple length " + std::to_string(p.k) + " does not fit data's rank");
  p.tuples = indices.numel() / p.k;
  for (size_t d = batchDims + static_cast<size_t>(p.k); d < data.dims().size(); ++d) p.slice *= data.dims()[d];
  return p;
}

// Element offset (in data, relative to its batch) of the slice addressed by tuple t.
int64_t sliceOffset(const KernelContext& ctx, const Tensor& data, const std::vector<int64_t>& idx, const NdPlan& p,
                    size_t batchDims, int64_t t) {
  int64_t off = 0;
  for (int64_t j = 0; j < p.k; ++j) {
    const int64_t extent = data.dims()[batchDims + static_cast<size_t>(j)];
    off = off * extent + checkedIndex(ctx, idx[static_cast<size_t>(t * p.k + j)], extent);
  }
  return off * p.slice;
}

std::vector<Tensor> scatterNd(const KernelContext& ctx) {
  const Tensor& data = ctx.required(0);
  const Tensor& indices = ctx.required(1);
  const Tensor& updates = ctx.required(2);
  if (updates.dtype() != data.dtype()) ctx.fail("updates must have data's element type");
  const NdPlan p = ndPlan(ctx, data, indices, 0);
  std::vector<int64_t> want(indices.dims().begin(), indices.dims().end() - 1);
  want.insert(want.end(), data.dims().begin() + p.k, data.dims().end());
  if (updates.dims() != want) ctx.fail("updates must have shape indices[:-1] + data[k:]");
  const Writer writer(data, reductionOf(ctx));
  if (!writer.supported()) return {};
  checkScratch(ctx, indices.numel(), sizeof(int64_t));
  const std::vector<int64_t> idx = intValues(ctx, indices, "indices");
  OutBuffer out = copyOf(ctx, data);
  for (int64_t t = 0; t < p.tuples; ++t) {
    const int64_t base = sliceOffset(ctx, data, idx, p, 0, t);
    for (int64_t e = 0; e < p.slice; ++e) writer.write(out.data(), base + e, updates.data(), t * p.slice + e);
  }
  return {out.finish()};
}

// GatherND with batch_dims b: the first b dims of data and indices are shared; each index tuple reads one slice.
std::vector<Tensor> gatherNd(const KernelContext& ctx) {
  const Tensor& data = ctx.required(0);
  const Tensor& indices = ctx.required(1);
  const int64_t b = ctx.node().attrInt("batch_dims", 0);
  if (b < 0 || b >= static_cast<int64_t>(std::min(data.dims().size(), indices.dims().size())))
    ctx.fail("batch_dims must be below the ranks of data and indices");
  const size_t batchDims = static_cast<size_t>(b);
  int64_t batches = 1;
  for (size_t d = 0; d < batchDims; ++d) {
    if (data.dims()[d] != indices.dims()[d]) ctx.fail("batch dims of data and indices differ");
    batches *= data.dims()[d];
  }
  const NdPlan p = ndPlan(ctx, data, indices, batchDims);
  std::vector<int64_t> dims(indices.dims().begin(), indices.dims().end() - 1);
  dims.insert(dims.end(), data.dims().begin() + static_cast<int64_t>(batchDims) + p.k, data.dims().end());
  OutBuffer out(ctx, data.dtype(), dims);
  if (out.numel() == 0) return {out.finish()};
  checkScratch(ctx, indices.numel(), sizeof(int64_t));
  const std::vector<int64_t> idx = intValues(ctx, indices, "indices");
  const int64_t size = dtypeSize(data.dtype());
  const int64_t perBatch = p.tuples / batches;  // tuples per batch
  const int64_t batchElems = batches ? data.numel() / batches : 0;
  for (int64_t t = 0; t < p.tuples; ++t) {
    const int64_t src = (t / perBatch) * batchElems + sliceOffset(ctx, data, idx, p, batchDims, t);
    std::memcpy(out.data() + t * p.slice * size, data.data() + src * size, static_cast<size_t>(p.slice * size));
  }
  return {out.finish()};
}

// MaxUnpool(X, I, output_shape?): the inverse of MaxPool with indices. X[i] goes to the flat position I[i] (MaxPool's
// Indices count over the whole [N, C, spatial...] tensor) of the unpooled shape, whose spatial extents are
// (in - 1) * stride + kernel - pad_begin - pad_end; the rest is zero. A larger output_shape pads that result at the end
// of each dim, as the ONNX reference does: indices keep their coordinates, not their flat positions.
std::vector<Tensor> maxUnpool(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  const Tensor& indices = ctx.required(1);
  const Node& node = ctx.node();
  if (x.dims().size() < 3) ctx.fail("X must be [N, C, spatial...]");
  if (indices.dims() != x.dims()) ctx.fail("I must have X's shape");
  const size_t spatial = x.dims().size() - 2;
  const std::vector<int64_t> kernel = node.attrInts("kernel_shape");
  std::vector<int64_t> strides = node.attrInts("strides"), pads = node.attrInts("pads");
  if (strides.empty()) strides.assign(spatial, 1);
  if (pads.empty()) pads.assign(2 * spatial, 0);
  if (kernel.size() != spatial || strides.size() != spatial || pads.size() != 2 * spatial)
    ctx.fail("kernel_shape, strides and pads must match the spatial rank");
  std::vector<int64_t> unpooled = {x.dims()[0], x.dims()[1]};
  for (size_t d = 0; d < spatial; ++d) {
    if (kernel[d] < 1 || strides[d] < 1 || pads[d] < 0 || pads[d + spatial] < 0)
      ctx.fail("kernel_shape and strides must be positive, pads non-negative");
    const int64_t in = x.dims()[d + 2];
    const std::optional<int64_t> span = checkedMul(in > 0 ? in - 1 : 0, strides[d]);
    int64_t extent = 0, padSum = 0;
    if (!span || __builtin_add_overflow(*span, kernel[d], &extent)) ctx.fail("output extent overflows");
    if (__builtin_add_overflow(pads[d], pads[d + spatial], &padSum) || padSum > extent)
      ctx.fail("pads exceed the output extent");
    unpooled.push_back(extent - padSum);
  }
  std::vector<int64_t> dims = unpooled;
  if (const Tensor* shape = ctx.input(2)) {
    dims = intValues(ctx, *shape, "output_shape");
    if (dims.size() != unpooled.size()) ctx.fail("output_shape must have X's rank");
    for (size_t d = 0; d < dims.size(); ++d)
      if (dims[d] < unpooled[d] || (d < 2 && dims[d] != unpooled[d]))
        ctx.fail("output_shape is smaller than the unpooled shape (or changes N or C)");
  }
  OutBuffer out(ctx, x.dtype(), dims);
  const std::optional<int64_t> positions = checkedProduct(unpooled);  // at most out.numel(): cannot overflow
  checkScratch(ctx, indices.numel(), sizeof(int64_t));
  const std::vector<int64_t> idx = intValues(ctx, indices, "indices");
  const size_t size = static_cast<size_t>(dtypeSize(x.dtype()));
  for (size_t i = 0; i < idx.size(); ++i) {
    if (idx[i] < 0 || idx[i] >= *positions)
      ctx.fail("index " + std::to_string(idx[i]) + " outside the unpooled " + std::to_string(*positions) + " elements");
    int64_t rest = idx[i], at = 0, scale = 1;  // the same coordinates in the (possibly larger) output
    for (size_t d = dims.size(); d-- > 0;) {
      at += (rest % unpooled[d]) * scale;
      rest /= unpooled[d];
      scale *= dims[d];
    }
    copyElement(out.data() + static_cast<size_t>(at) * size, x.data() + i * size, size);
  }
  return {out.finish()};
}

}  // namespace

void registerScatterGatherKernels(KernelRegistry& r) {
  r.add("ScatterElements", scatterElements);
  r.add("Scatter", scatterElements);
  r.add("ScatterND", scatterNd);
  r.add("GatherND", gatherNd);
  r.add("MaxUnpool", maxUnpool);
}

}  // namespace kiln::kernels
