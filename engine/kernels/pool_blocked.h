#pragma once
// Global pools on fp32 activations kept in the NPU's NC1HWC0 layout (C0 = 16), for the compiled mode: each block's
// 16 lanes reduce side by side over the plane, with no conversion to NCHW first (MobileNetV3's squeeze-and-excite
// blocks pool every stage).
#include <optional>

#include "kernels/kernel.h"

namespace kiln::kernels {

// GlobalAveragePool or GlobalMaxPool (`n`) of x stored NC1HWC0 ([N, C1, H, W, 16]) whose logical extents are
// `logical` ([N, C, H, W]): the [N, C1, 1, 1, 16] result, spare lanes zero. Each channel is the reference kernel's
// sum (or max) in double, in the same order: the same bits. Nullopt, having computed nothing, for another op, element
// type or layout.
std::optional<Tensor> globalPoolNc1hwc0(const Node& n, const Tensor& x, const std::vector<int64_t>& logical,
                                        const KernelLimits& limits);

}  // namespace kiln::kernels
