#pragma once
// The compiled graph keeps activations and weights in the NPU's blocked layouts (NC1HWC0, FRACTAL_Z, FRACTAL_NZ)
// while the reference kernels compute on logical (NCHW / ND) tensors. Both executors run every node through here:
// its blocked inputs are read back at their recorded origin shape, the kernel runs, and its outputs are stored in
// the layouts their values record. TransData and TransDataCast see the physical data they convert. So the numbers
// of a compiled run depend on every layout decision the compiler made (a badly re-laid-out weight, a wrong origin
// or padding read as data all give wrong numbers), not on the kernels knowing the layouts.
#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "ir/tensor.h"
#include "kernels/kernel.h"
#include "ir/value_type.h"

namespace kiln {

class Node;
class Value;

// `stored` (a tensor of type t) as its logical tensor: the origin's extents, row-major. A tensor that is not blocked
// comes back as it is. Throws std::runtime_error when t is blocked without a usable origin or the data does not have
// t's physical extents.
Tensor logicalTensor(const Tensor& stored, const ValueType& t, int64_t maxOutputBytes);
// The inverse: a logical tensor stored as t (zero padding in the blocks). Throws when it does not fit t.
Tensor storedTensor(const Tensor& logical, const ValueType& t, int64_t maxOutputBytes);

// Whether n's kernel reads its operands as laid out (TransData and TransDataCast) rather than in logical form.
bool readsPhysicalLayout(const Node& n);

// Logical forms converted ahead of the nodes that read them (the compiled run's blocked weights, once per run).
using LogicalByValue = std::unordered_map<const Value*, Tensor>;

// One node's operands as its kernel reads them, and its results as its outputs store them.
class KernelOperands {
 public:
  // `stored[i]` holds input i as laid out (nullptr for an absent optional input); the converted tensors live here,
  // except those `prepared` already holds (by the node's input value).
  KernelOperands(const Node& n, const std::vector<const Tensor*>& stored, int64_t maxOutputBytes,
                 const LogicalByValue* prepared = nullptr);
  const std::vector<const Tensor*>& inputs() const { return inputs_; }
  // Stores the kernel's results in the layouts of the node's output values (in place).
  void storeOutputs(std::vector<Tensor>& results) const;

 private:
  const Node& node_;
  int64_t maxOutputBytes_;
  bool convert_;
  std::vector<Tensor> converted_;
  std::vector<const Tensor*> inputs_;
};

// Conv and kiln FusedConv whose activations (X, the output, FusedConv's Z) are fp32 NC1HWC0 in NCHW order,
// computed on the stored blocks (kernels/conv_blocked.h) with W and B read in logical form (from `prepared` where
// it holds them): the output as stored. Nullopt, having computed nothing, for any other node or a convolution the
// blocked kernel has no form for (the caller then converts the operands as for any kernel).
// `into`: where the output should go if it can (kernels::convolveStoredNc1hwc0); an invalid result means it went there.
// `workspace`: scratch for the convolution (blockedConvWorkspace), allocated by the kernel when it is smaller.
std::optional<Tensor> convolveOnStoredBlocks(const Node& n, const std::vector<const Tensor*>& stored,
                                             const KernelLimits& limits, const LogicalByValue* prepared = nullptr,
                                             std::span<float> into = {}, std::span<float> workspace = {});
// The scratch, in floats, convolveOnStoredBlocks takes for n (0 for a node it does not compute on the blocks, or
// one that needs none), from the extents its values record.
int64_t blockedConvWorkspace(const Node& n);

// BatchNormalization (inference), or a Mul or Add by a per-channel operand, on an fp32 NC1HWC0 activation: one
// pass over the stored blocks (kernels::followersOnNc1hwc0) instead of a round trip through NCHW. `into` as for
// convolveOnStoredBlocks. Nullopt, having computed nothing, for any other node or operands.
std::optional<Tensor> channelOpOnStoredBlocks(const Node& n, const std::vector<const Tensor*>& stored,
                                              const KernelLimits& limits, const LogicalByValue* prepared = nullptr,
                                              std::span<float> into = {});

// A fused op whose body is one chain of such per-channel ops on an fp32 NC1HWC0 activation (BatchNormalization, Mul
// or Add by a per-channel operand, Relu, Clip: DenseNet's Mul, Add, Relu before each convolution) in one pass over
// the stored blocks instead of node by node. `into` as for convolveOnStoredBlocks. Nullopt, having computed
// nothing, for any other node or body.
std::optional<Tensor> channelChainOnStoredBlocks(const Node& n, const std::vector<const Tensor*>& stored,
                                                 const KernelLimits& limits, const LogicalByValue* prepared = nullptr,
                                                 std::span<float> into = {});

// GlobalAveragePool / GlobalMaxPool of an fp32 NC1HWC0 activation into an NC1HWC0 output, reduced on the stored
// blocks (kernels::globalPoolNc1hwc0). Nullopt, having computed nothing, for any other node or layout.
std::optional<Tensor> poolOnStoredBlocks(const Node& n, const std::vector<const Tensor*>& stored,
                                         const KernelLimits& limits);

}  // namespace kiln
