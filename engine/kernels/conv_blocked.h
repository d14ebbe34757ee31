#pragma once
// Conv and FusedConv on fp32 activations kept in the NPU's NC1HWC0 layout (C0 = 16), computed on the stored blocks
// and stored as blocks (nn::convolveNc1hwc0), for the compiled mode: no conversion to NCHW and back around the node.
#include <optional>
#include <span>
#include <vector>

#include "kernels/kernel.h"

namespace kiln::kernels {

// `n` (Conv, or kiln FusedConv with its Z residual and activation) on `inputs`: X stored NC1HWC0 ([N, C1, H, W, 16])
// whose logical extents are `xLogical` ([N, C, H, W]), W and B logical, Z (FusedConv) stored as the output is. The
// output stored NC1HWC0, spare lanes zero. Nullopt, having computed nothing, for what has no blocked form here
// (another element type, a grouped convolution that is not depthwise, not 2-D); a malformed node throws.
// `into`, when it has exactly the output's elements and overlaps no input, receives the output instead (the
// compiled mode's arena block): the result is then an invalid Tensor. `workspace`: the convolution's scratch
// (nn::blockedConvWorkspace floats), allocated here when it is smaller.
std::optional<Tensor> convolveStoredNc1hwc0(const Node& n, const std::vector<const Tensor*>& inputs,
                                            const std::vector<int64_t>& xLogical, const KernelLimits& limits,
                                            std::span<float> into = {}, std::span<float> workspace = {});

}  // namespace kiln::kernels
