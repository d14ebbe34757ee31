#pragma once
// The arithmetic of folding an inference BatchNormalization into the producer of its input, shared by
// ConvBatchNormFusion (Stage 2, Conv producers, as GE fuses Conv+BN) and BatchNormFold (Stage 1, Gemm producers).
// With s = gamma / sqrt(var + eps), BN is y = s·x + (beta - s·mean) per channel. Computed in double and rounded
// once into the weights' own type.
#include <optional>
#include <vector>

#include "ir/tensor.h"

namespace kiln {

class Node;

// Per-channel y = scale·x + shift.
struct BatchNormAffine {
  std::vector<double> scale, shift;
};

// New constant inputs for the producer.
struct FoldedWeights {
  Tensor weights, bias;
};

// Training-mode BN normalises with the batch's own statistics: only the running-statistics form (no used optional
// outputs) can be folded.
bool isInferenceBatchNorm(const Node& bn);
// The affine form of `bn` over `channels` channels, when its four parameters are floating constants of that size.
std::optional<BatchNormAffine> batchNormAffine(const Node& bn, int64_t channels);
// Values computed in double, stored in type `t`.
Tensor tensorInType(DType t, std::vector<int64_t> dims, const std::vector<double>& values);
// Conv weights are [M, C/group, k...] whatever the group: output channel m owns the m-th slab of dim 0. The
// result's bias is new when `bias` is null.
std::optional<FoldedWeights> foldBatchNormIntoConv(const Tensor& w, const Tensor* bias, const Node& bn);

}  // namespace kiln
