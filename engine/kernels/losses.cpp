// NegativeLogLikelihoodLoss: input [N, C, d...] (log-probabilities), target [N, d...] class indices, optional
// weight [C]. Each element's loss is -input[n, target, d] · weight[target]; a target equal to ignore_index counts
// nothing. reduction "none" keeps [N, d...], "sum" adds them, "mean" divides by the summed weights of the counted
// elements. In double.
#include "ir/graph.h"
#include "kernels/kernel_util.h"
#include "kernels/nn_kernels.h"

namespace kiln::kernels {
namespace {

std::vector<Tensor> nllLoss(const KernelContext& ctx) {
  const Tensor& input = ctx.required(0);
  const Tensor& target = ctx.required(1);
  const Tensor* weight = ctx.input(2);
  if (input.dims().size() < 2 || target.dims().size() + 1 != input.dims().size()) ctx.fail("input must be [N, C, d...] and target [N, d...]");
  const int64_t n = input.dims()[0], c = input.dims()[1];
  int64_t inner = 1;
  for (size_t d = 2; d < input.dims().size(); ++d) {
    if (target.dims()[d - 1] != input.dims()[d]) ctx.fail("target's extents differ from input's");
    inner *= input.dims()[d];
  }
  if (target.dims()[0] != n) ctx.fail("target's batch differs from input's");
  if (weight && weight->numel() != c) ctx.fail("weight must hold one value per class");
  const std::string reduction = ctx.node().attrString("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean") ctx.fail("reduction '" + reduction + "' is not none, sum or mean");
  const bool hasIgnore = ctx.node().attr("ignore_index") != nullptr;
  const int64_t ignore = ctx.node().attrInt("ignore_index", 0);
  std::vector<Tensor> out;
  dispatch<kFloats>(input.dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    const std::vector<double> in = nn::loadAll<S, double>(ctx, input);
    const std::vector<int64_t> t = intValues(ctx, target, "target");
    const std::vector<double> wv = weight ? weight->toDouble() : std::vector<double>{};
    std::vector<double> loss(static_cast<size_t>(n * inner), 0.0);
    double total = 0, weights = 0;
    for (int64_t b = 0; b < n; ++b)
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t cls = t[static_cast<size_t>(b * inner + i)];
        if (hasIgnore && cls == ignore) continue;
        if (cls < 0 || cls >= c) ctx.fail("target class " + std::to_string(cls) + " is out of range");
        const double wgt = weight ? wv[static_cast<size_t>(cls)] : 1.0;
        const double l = -in[static_cast<size_t>((b * c + cls) * inner + i)] * wgt;
        loss[static_cast<size_t>(b * inner + i)] = l;
        total += l;
        weights += wgt;
      }
    if (reduction == "none") out.push_back(nn::storeAll<S>(ctx, target.dims(), loss));
    else out.push_back(nn::storeAll<S>(ctx, {}, std::vector<double>{reduction == "sum" ? total : total / weights}));
  });
  return out;
}

}  // namespace

void registerLossKernels(KernelRegistry& r) { r.add("NegativeLogLikelihoodLoss", nllLoss); }

}  // namespace kiln::kernels
