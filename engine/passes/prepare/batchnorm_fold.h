#pragma once
// BatchNormFold (prepare stage): an inference BatchNormalization that is the only consumer of a Gemm (normalising
// its output features) with constant weights, bias and BN parameters is folded away: with s = gamma / sqrt(var +
// eps), column n of op(B) is scaled by s[n] and C becomes s[n]·beta·C + shift[n] (the node's beta becomes 1).
// Handles Gemm's transB. Conv+BN is a Stage 2 graph fusion, as in GE (ConvBatchNormFusion, switchable by name);
// both use the same arithmetic (batchnorm_math.h). fp32 / fp16 / bf16 / double weights, computed in double.
// Counter: folded.
#include <memory>

#include "passes/pass.h"

namespace kiln {

std::unique_ptr<Pass> makeBatchNormFoldPass();

}  // namespace kiln
