// Softmax, LogSoftmax and Hardmax in both ONNX forms:
//  - opset 13 on: one axis (default -1) is normalised, every other index is its own row;
//  - before 13: the input is coerced to 2-D at `axis` (default 1) and the whole trailing block [axis, rank) is one
//    row.
// Which one applies depends on the model's default-domain opset, which the reader keeps in Model::opsets; a kernel
// sees only the Node (its Graph has no path to the Model), so the opset comes from the caller that holds the model
// (KernelLimits::opset: the executors, constant folding) or a node annotation "opset" (decimal). Without it the two forms are told apart only where they
// agree: the normalised axis is the last one (explicit, or by default on a rank-1/rank-2 input), which covers the
// classifier heads and attention scores that matter. Otherwise the kernel declines (the node is left unevaluated)
// rather than guess: a guess would be silently wrong for half the models.
#include <optional>

#include "kernels/nn_kernels.h"
#include "ir/graph.h"
#include "ir/shape.h"

namespace kiln::kernels {
namespace {

std::optional<int64_t> annotatedOpset(const Node& node) {
  const std::string s = node.annotation("opset");
  if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  return std::stoll(s);
}

struct Rows {
  int64_t outer = 1, n = 1, inner = 1;
};

// The row layout, or nullopt when the opset is unknown and the two forms would differ.
std::optional<Rows> rowsOf(const KernelContext& ctx, const std::vector<int64_t>& dims) {
  const Node& node = ctx.node();
  const auto rank = static_cast<int64_t>(dims.size());
  if (rank == 0) ctx.fail("the input must have rank 1 or more");
  std::optional<int64_t> opset = annotatedOpset(node);
  if (!opset && ctx.limits().opset > 0) opset = ctx.limits().opset;
  const bool hasAxis = hasAttr(node, "axis");
  if (!opset) {
    const int64_t axis = hasAxis ? normalizeAxis(ctx, node.attrInt("axis", -1), rank, "axis") : rank - 1;
    // Absent, the axis is -1 (13+) or 1 (before): the same axis only for rank 2; rank 1 allows only 13's.
    const bool agree = axis == rank - 1 && (hasAxis || rank <= 2);
    if (!agree) return std::nullopt;
    opset = 13;
  }
  const bool coerce = *opset < 13;
  const int64_t axis = normalizeAxis(ctx, node.attrInt("axis", coerce ? 1 : -1), rank, "axis");
  Rows r;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t& part = d < axis ? r.outer : (d == axis || coerce ? r.n : r.inner);
    part = checkedMul(part, dims[static_cast<size_t>(d)]).value_or(0);  // overflows only with an empty input
  }
  return r;
}

template <nn::SoftmaxKind K>
std::vector<Tensor> softmaxKernel(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  std::vector<Tensor> out;
  if (!isFloating(x.dtype())) return out;
  const std::optional<Rows> rows = rowsOf(ctx, x.dims());  // validates the axis even for an empty input
  if (!rows) return out;
  if (x.numel() == 0) return {x};  // also keeps the row products below clear of overflow
  dispatch<kFloats>(x.dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    nn::Result<S> y(ctx, x.dtype(), x.dims());  // fp32: normalised in the output itself, no copies either way
    const nn::Operand<S> in(ctx, x);
    std::copy_n(in.data(), y.numel(), y.data());
    nn::softmaxRows(y.data(), rows->outer, rows->n, rows->inner, K);
    out.push_back(y.finish());
  });
  return out;
}

}  // namespace

void registerSoftmaxKernels(KernelRegistry& r) {
  r.add("Softmax", softmaxKernel<nn::SoftmaxKind::Softmax>);
  r.add("LogSoftmax", softmaxKernel<nn::SoftmaxKind::LogSoftmax>);
  r.add("Hardmax", softmaxKernel<nn::SoftmaxKind::Hardmax>);
}

}  // namespace kiln::kernels
