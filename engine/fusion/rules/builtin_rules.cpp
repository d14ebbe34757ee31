#include "fusion/rules/builtin_rules.h"

namespace kiln {

// Priority order: a bigger pattern before the smaller ones it contains (MatMul+Add+GELU before MatMul+Add, Conv+BN
// before Conv+activation), a rule that builds on another's result after it (Add+LayerNorm after LayerNorm).
// AttentionFusion goes first: it needs the Kᵀ Transpose that TransposeMatMulFusion absorbs.
FusionRuleList builtinFusionRules() {
  return {
      makeAttentionFusion(),  // first: smaller rules would take its MatMuls and Transposes apart
      makeSoftmaxDropoutFusion(),
      makeBiasSoftmaxFusion(),
      makeConvBatchNormFusion(),
      makeConvBiasAddFusion(),
      makeConvActivationFusion(),
      makeFlattenGemmFusion(),         // a classifier on a pooled [N, C, 1, 1]: a 1x1 convolution, as GE runs it
      makeReshapeGemmReshapeFusion(),  // Linear layers exported through 2-D Gemm
      makeWeightQuantMatMulFusion(),  // before the MatMul rules, which would take the MatMul alone
      makeMatMulAddGeluFusion(),
      makeMatMulBiasAddFusion(),
      makeTransposeMatMulFusion(),
      makeGeluFusion(),
      makeLayerNormFusion(),
      makeRmsNormFusion(),
      makeAddLayerNormFusion(),
      makeAddRmsNormFusion(),
  };
}

}  // namespace kiln
