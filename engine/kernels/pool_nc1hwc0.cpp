#include "kernels/pool_blocked.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "ir/graph.h"
#include "kernels/nn_kernels.h"

namespace kiln::kernels {

std::optional<Tensor> globalPoolNc1hwc0(const Node& n, const Tensor& x, const std::vector<int64_t>& logical,
                                        const KernelLimits& limits) {
  constexpr int64_t kC0 = 16;
  const bool average = n.opType() == "GlobalAveragePool";
  if (!n.domain().empty() || !(average || n.opType() == "GlobalMaxPool")) return std::nullopt;
  if (x.dtype() != DType::Float || logical.size() != 4) return std::nullopt;
  const int64_t c1 = (logical[1] + kC0 - 1) / kC0, plane = logical[2] * logical[3];
  if (x.dims() != std::vector<int64_t>{logical[0], c1, logical[2], logical[3], kC0}) return std::nullopt;
  const std::vector<const Tensor*> operands{&x};
  const KernelContext ctx(n, operands, limits);
  nn::Result<float, float> y(ctx, DType::Float, {logical[0], c1, 1, 1, kC0});
  const nn::Operand<float, float> xv(ctx, x);
  for (int64_t b = 0; b < logical[0] * c1; ++b) {
    const float* block = xv.data() + b * plane * kC0;
    // Sixteen sequential sums side by side: each lane's order is the NCHW kernel's (pool.cpp, globalPool).
    double acc[kC0];
    std::fill_n(acc, kC0, average ? 0.0 : -std::numeric_limits<double>::infinity());
    for (int64_t i = 0; i < plane; ++i)
      for (int64_t l = 0; l < kC0; ++l) {
        const double v = block[i * kC0 + l];
        acc[l] = average ? acc[l] + v : std::max(acc[l], v);
      }
    const int64_t lanes = std::min(kC0, logical[1] - (b % c1) * kC0);
    for (int64_t l = 0; l < kC0; ++l)
      y.data()[b * kC0 + l] = l < lanes ? static_cast<float>(average ? acc[l] / static_cast<double>(plane) : acc[l]) : 0.0f;
  }
  return y.finish();
}

}  // namespace kiln::kernels
