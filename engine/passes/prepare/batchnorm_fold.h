#pragma once
// BatchNormFold (prepare stage; GE's Conv+BN fusion done on weights): an inference BatchNormalization that is the
// only consumer of a Conv (or of a Gemm, normalising its output features) with constant weights, bias and BN
// parameters is folded away: with s = gamma / sqrt(var + eps), the weights of output channel c are scaled by s[c]
// and the bias becomes s[c] * (bias[c] - mean[c]) + beta[c] (a bias is added when the Conv had none).
// Handles grouped Conv (weights are [M, C/group, k...]: output channels on dim 0 either way) and Gemm's transB.
// fp32 / fp16 / bf16 / double weights; the arithmetic is done in double and rounded once.
// Counter: folded.
#include <memory>

#include "passes/pass.h"

namespace kiln {

std::unique_ptr<Pass> makeBatchNormFoldPass();

}  // namespace kiln
