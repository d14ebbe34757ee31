// Kernels that select, mask or rearrange elements by position: Compress, Trilu, EyeLike, ReverseSequence,
// DepthToSpace, SpaceToDepth. Like the movement kernels they copy element bytes, so every fixed-size type works.
#include <algorithm>

#include "kernels/kernel_util.h"
#include "ir/graph.h"
#include "ir/shape.h"

namespace kiln::kernels {
namespace {

// Compress(input, condition): the slices along axis whose condition is true (input flattened without axis).
std::vector<Tensor> compress(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  const Tensor& cond = ctx.required(1);
  if (cond.dtype() != DType::Bool || cond.dims().size() != 1) ctx.fail("condition must be a 1-D bool tensor");
  std::vector<int64_t> dims = x.dims();
  size_t axis = 0;
  if (hasAttr(ctx.node(), "axis"))
    axis = static_cast<size_t>(
        normalizeAxis(ctx, ctx.node().attrInt("axis", 0), static_cast<int64_t>(dims.size()), "axis"));
  else
    dims = {x.numel()};
  const int64_t n = dims[axis];
  std::vector<int64_t> picked;
  for (int64_t i = 0; i < cond.numel(); ++i) {
    if (cond.data()[i] == 0) continue;
    if (i >= n) ctx.fail("condition selects index " + std::to_string(i) + " beyond extent " + std::to_string(n));
    picked.push_back(i);
  }
  int64_t outer = 1, inner = dtypeSize(x.dtype());
  for (size_t d = 0; d < dims.size(); ++d) {
    if (d < axis) outer *= dims[d];
    if (d > axis) inner *= dims[d];
  }
  dims[axis] = static_cast<int64_t>(picked.size());
  OutBuffer out(ctx, x.dtype(), dims);
  uint8_t* dst = out.data();
  for (int64_t o = 0; o < outer && inner > 0; ++o)
    for (int64_t i : picked) {
      std::memcpy(dst, x.data() + (o * n + i) * inner, static_cast<size_t>(inner));
      dst += inner;
    }
  return {out.finish()};
}

// Trilu(input, k): keeps the upper (j - i >= k) or lower (j - i <= k) triangle of each trailing matrix, zeroes the
// rest.
std::vector<Tensor> trilu(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  const size_t rank = x.dims().size();
  if (rank < 2) ctx.fail("input must have rank >= 2");
  int64_t k = 0;
  if (const Tensor* kt = ctx.input(1)) {
    const std::vector<int64_t> kv = intValues(ctx, *kt, "k");
    if (kv.size() != 1) ctx.fail("k must be a scalar");
    k = kv[0];
  }
  const bool upper = ctx.node().attrInt("upper", 1) != 0;
  const int64_t rows = x.dims()[rank - 2], cols = x.dims()[rank - 1];
  const int64_t size = dtypeSize(x.dtype());
  OutBuffer out(ctx, x.dtype(), x.dims());  // zero-filled: zero bytes are 0 (or false) in every element type
  for (int64_t e = 0; e < x.numel(); ++e) {
    const int64_t j = e % cols, i = (e / cols) % rows;
    const int64_t diff = j - i;  // both below the extents, so no overflow against any k
    if (upper ? diff >= k : diff <= k)
      copyElement(out.data() + e * size, x.data() + e * size, static_cast<size_t>(size));
  }
  return {out.finish()};
}

// EyeLike(input): a 2-D tensor of input's shape with ones on diagonal k, in the `dtype` attribute's type or input's.
std::vector<Tensor> eyeLike(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  if (x.dims().size() != 2) ctx.fail("input must be 2-D");
  DType type = x.dtype();
  if (hasAttr(ctx.node(), "dtype")) {
    const std::optional<DType> t = dtypeFromOnnx(static_cast<int>(ctx.node().attrInt("dtype", 0)));
    if (!t) ctx.fail("unknown dtype");
    type = *t;
  }
  const int64_t k = ctx.node().attrInt("k", 0);
  const int64_t rows = x.dims()[0], cols = x.dims()[1];
  std::vector<Tensor> out;
  dispatch<kAll>(type, [&](auto tag) {
    using S = typename decltype(tag)::type;
    OutBuffer o(ctx, type, x.dims());
    if (k < cols && k > -rows)  // otherwise the diagonal misses the matrix (and i + k could overflow)
      for (int64_t i = std::max<int64_t>(0, -k); i < rows && i + k < cols; ++i)
        Elem<S>::store(o.data(), i * cols + i + k, ComputeOf<S>(1));
    out.push_back(o.finish());
  });
  return out;
}

// ReverseSequence(input, sequence_lens): reverses the first sequence_lens[b] steps along time_axis for each batch b.
std::vector<Tensor> reverseSequence(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  const int64_t batchAxis = ctx.node().attrInt("batch_axis", 1);
  const int64_t timeAxis = ctx.node().attrInt("time_axis", 0);
  if (x.dims().size() < 2) ctx.fail("input must have rank >= 2");
  if (!((batchAxis == 0 && timeAxis == 1) || (batchAxis == 1 && timeAxis == 0)))
    ctx.fail("batch_axis and time_axis must be 0 and 1 in some order");
  const std::vector<int64_t> lens = intValues(ctx, ctx.required(1), "sequence_lens");
  const int64_t batch = x.dims()[static_cast<size_t>(batchAxis)];
  const int64_t steps = x.dims()[static_cast<size_t>(timeAxis)];
  if (static_cast<int64_t>(lens.size()) != batch) ctx.fail("sequence_lens must have one entry per batch");
  for (int64_t l : lens)
    if (l < 0 || l > steps)
      ctx.fail("sequence length " + std::to_string(l) + " outside [0, " + std::to_string(steps) + "]");
  int64_t inner = dtypeSize(x.dtype());  // bytes per (dim 0, dim 1) position
  for (size_t d = 2; d < x.dims().size(); ++d) inner *= x.dims()[d];
  const auto at = [&](int64_t bi, int64_t ti) { return batchAxis == 0 ? bi * steps + ti : ti * batch + bi; };
  OutBuffer out(ctx, x.dtype(), x.dims());
  if (x.byteSize() == 0) return {out.finish()};
  std::memcpy(out.data(), x.data(), x.byteSize());
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t len = lens[static_cast<size_t>(b)];
    for (int64_t t = 0; t < len; ++t)
      std::memcpy(out.data() + at(b, t) * inner, x.data() + at(b, len - 1 - t) * inner, static_cast<size_t>(inner));
  }
  return {out.finish()};
}

// DepthToSpace and SpaceToDepth are a reshape to rank 6, a transpose and a reshape back: one strided walk.
Tensor rank6Transpose(const KernelContext& ctx, const Tensor& x, const std::vector<int64_t>& view,
                      const std::vector<size_t>& perm, std::vector<int64_t> outDims) {
  const std::vector<int64_t> viewStrides = stridesOf(view);
  std::vector<int64_t> walkDims, walk;
  for (size_t p : perm) {
    walkDims.push_back(view[p]);
    walk.push_back(viewStrides[p]);
  }
  OutBuffer out(ctx, x.dtype(), std::move(outDims));
  stridedCopy(out, x, walkDims, walk);
  return out.finish();
}

int64_t blockSize(const KernelContext& ctx, const Tensor& x) {
  if (x.dims().size() != 4) ctx.fail("input must be 4-D [N, C, H, W]");
  const int64_t b = ctx.node().attrInt("blocksize", 0);
  if (b < 1) ctx.fail("blocksize must be positive");
  return b;
}

std::vector<Tensor> depthToSpace(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  const int64_t b = blockSize(ctx, x);
  const int64_t n = x.dims()[0], c = x.dims()[1], h = x.dims()[2], w = x.dims()[3];
  const std::optional<int64_t> bb = checkedMul(b, b);
  if (!bb || c % *bb != 0) ctx.fail("channels are not a multiple of blocksize^2");
  const int64_t oc = c / *bb;
  const std::string mode = ctx.node().attrString("mode", "DCR");
  // With no channels any blocksize divides them, so h * b and w * b may overflow.
  const std::optional<int64_t> oh = checkedMul(h, b), ow = checkedMul(w, b);
  if (!oh || !ow) ctx.fail("output extent overflows");
  if (mode == "DCR")
    return {rank6Transpose(ctx, x, {n, b, b, oc, h, w}, {0, 3, 4, 1, 5, 2}, {n, oc, *oh, *ow})};
  if (mode == "CRD")
    return {rank6Transpose(ctx, x, {n, oc, b, b, h, w}, {0, 1, 4, 2, 5, 3}, {n, oc, *oh, *ow})};
  ctx.fail("mode must be DCR or CRD");
}

std::vector<Tensor> spaceToDepth(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  const int64_t b = blockSize(ctx, x);
  const int64_t n = x.dims()[0], c = x.dims()[1], h = x.dims()[2], w = x.dims()[3];
  if (h % b != 0 || w % b != 0) ctx.fail("height and width must be multiples of blocksize");
  const std::optional<int64_t> bb = checkedMul(b, b);
  const std::optional<int64_t> oc = bb ? checkedMul(c, *bb) : std::nullopt;
  if (!oc) ctx.fail("output channels overflow");
  return {rank6Transpose(ctx, x, {n, c, h / b, b, w / b, b}, {0, 3, 5, 1, 2, 4}, {n, *oc, h / b, w / b})};
}

}  // namespace

void registerRearrangeKernels(KernelRegistry& r) {
  r.add("Compress", compress);
  r.add("Trilu", trilu);
  r.add("EyeLike", eyeLike);
  r.add("ReverseSequence", reverseSequence);
  r.add("DepthToSpace", depthToSpace);
  r.add("SpaceToDepth", spaceToDepth);
}

}  // namespace kiln::kernels
