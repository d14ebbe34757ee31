#pragma once
// A Conv and the element-wise ops after it that act on each output channel alike — an inference
// BatchNormalization, a Mul or Add by a per-channel constant, Relu, Clip — run as one kernel call: each band of the
// convolution's output goes through them while it is still in cache, and no tensor is made for the values between.
// The results are the bits the ops give run one by one (the same arithmetic in the same type and order:
// nn::ChannelStep); only time and memory change. ONNX Runtime gets the same effect by folding BatchNormalization
// into the weights and fusing the activation, which changes the arithmetic; the reference mode must not.
//
// The executor decides which nodes form a chain (a value read by one node only, not a graph output); whether the
// operands allow it is only known at run time (element types, per-channel shapes), so a chain may be declined.
#include <optional>
#include <span>
#include <vector>

#include "kernels/kernel.h"

namespace kiln::kernels {

// One node after the convolution: its inputs as the executor holds them, except input `chainInput`, the value the
// previous node of the chain computes (not read; may be null).
struct ConvFollower {
  const Node* node = nullptr;
  std::vector<const Tensor*> inputs;
  size_t chainInput = 0;
};

// Whether `node` could follow a convolution in a chain, reading the chain's value as input `chainInput` (op type and
// attributes only; the operands are checked when the chain runs).
bool canFollowConv(const Node& node, size_t chainInput);

// Conv `conv` on `inputs`, then each follower in order: the last follower's output. Nullopt, having computed
// nothing, when the element types or a follower's operands do not allow the chain (run the nodes one by one then).
// A malformed Conv throws as the Conv kernel does.
std::optional<Tensor> convolveWithFollowers(const Node& conv, const std::vector<const Tensor*>& inputs,
                                            const std::vector<ConvFollower>& followers, const KernelLimits& limits);

// The same ops without the convolution, on an fp32 tensor stored NC1HWC0 (C0 = 16, `logical` its NCHW extents;
// the followers' other operands in logical form), for the compiled mode: one pass over the blocks, spare lanes zero,
// the bits the nodes give one by one. Written into `into` when it has exactly the result's elements and overlaps no
// operand (an invalid Tensor is returned then). Nullopt, having computed nothing, when the operands do not allow it.
std::optional<Tensor> followersOnNc1hwc0(const std::vector<ConvFollower>& followers, const Tensor& x,
                                         const std::vector<int64_t>& logical, const KernelLimits& limits,
                                         std::span<float> into = {});

}  // namespace kiln::kernels
