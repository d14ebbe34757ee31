// TensorScatter-24: writes a step's keys or values into a preallocated KV cache. past_cache [B, ..., max_seq, ...]
// and update [B, ..., seq, ...] differ only along `axis` (default -2, never the batch axis); update lands at
// write_indices[b] (default 0) for batch b, wrapping around max_seq in mode "circular", and must fit in "linear".
// Elements are copied as bytes, so every element type (float8 and int4 through the widened path) is handled.
#include "ir/graph.h"
#include "kernels/kernel_util.h"

namespace kiln::kernels {
namespace {

std::vector<Tensor> tensorScatter(const KernelContext& ctx) {
  const Tensor& past = ctx.required(0);
  const Tensor& update = ctx.required(1);
  if (past.dtype() != update.dtype()) ctx.fail("past_cache and update differ in element type");
  const auto rank = static_cast<int64_t>(past.dims().size());
  if (rank < 2 || static_cast<int64_t>(update.dims().size()) != rank) ctx.fail("past_cache and update differ in rank");
  const auto axis = static_cast<size_t>(normalizeAxis(ctx, ctx.node().attrInt("axis", -2), rank, "axis"));
  if (axis == 0) ctx.fail("axis cannot be the batch axis");
  for (size_t d = 0; d < past.dims().size(); ++d)
    if (d != axis && past.dims()[d] != update.dims()[d]) ctx.fail("past_cache and update differ outside axis");
  const std::string mode = ctx.node().attrString("mode", "linear");
  if (mode != "linear" && mode != "circular") ctx.fail("mode '" + mode + "' is not linear or circular");
  const int64_t batch = past.dims()[0], maxSeq = past.dims()[axis], seq = update.dims()[axis];
  std::vector<int64_t> where(static_cast<size_t>(batch), 0);
  if (const Tensor* w = ctx.input(2)) {
    where = intValues(ctx, *w, "write_indices");
    if (static_cast<int64_t>(where.size()) != batch) ctx.fail("write_indices must hold one index per batch");
  }
  int64_t outer = 1, inner = 1;  // per batch: extents before and after the axis
  for (size_t d = 1; d < axis; ++d) outer *= past.dims()[d];
  for (size_t d = axis + 1; d < past.dims().size(); ++d) inner *= past.dims()[d];
  const auto esize = static_cast<size_t>(dtypeSize(past.dtype()));
  OutBuffer out(ctx, past.dtype(), past.dims(), HeapStorage::Start::Unset);
  std::memcpy(out.data(), past.data(), past.byteSize());
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t start = where[static_cast<size_t>(b)];
    if (start < 0 || (mode == "linear" && start + seq > maxSeq))
      ctx.fail("write index " + std::to_string(start) + " with " + std::to_string(seq) + " steps does not fit " +
               std::to_string(maxSeq));
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t s = 0; s < seq; ++s) {
        const int64_t t = (start + s) % maxSeq;
        const size_t dst = static_cast<size_t>(((b * outer + o) * maxSeq + t) * inner) * esize;
        const size_t src = static_cast<size_t>(((b * outer + o) * seq + s) * inner) * esize;
        std::memcpy(out.data() + dst, update.data() + src, static_cast<size_t>(inner) * esize);
      }
  }
  return {out.finish()};
}

}  // namespace

void registerCacheKernels(KernelRegistry& r) { r.add("TensorScatter", tensorScatter); }

}  // namespace kiln::kernels
