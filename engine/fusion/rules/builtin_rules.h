#pragma once
// Kiln's built-in graph fusion rules, one per file in this folder, in the order GraphFusion tries them.
#include "fusion/fusion_rule.h"

namespace kiln {

FusionRuleList builtinFusionRules();

std::shared_ptr<FusionRule> makeConvBiasAddFusion();
std::shared_ptr<FusionRule> makeLayerNormFusion();
std::shared_ptr<FusionRule> makeRmsNormFusion();
std::shared_ptr<FusionRule> makeConvBatchNormFusion();
std::shared_ptr<FusionRule> makeConvActivationFusion();
std::shared_ptr<FusionRule> makeMatMulAddGeluFusion();
std::shared_ptr<FusionRule> makeMatMulBiasAddFusion();
std::shared_ptr<FusionRule> makeReshapeGemmReshapeFusion();
std::shared_ptr<FusionRule> makeFlattenGemmFusion();
std::shared_ptr<FusionRule> makeTransposeMatMulFusion();
std::shared_ptr<FusionRule> makeGeluFusion();
std::shared_ptr<FusionRule> makeAddLayerNormFusion();
std::shared_ptr<FusionRule> makeAddRmsNormFusion();
std::shared_ptr<FusionRule> makeAttentionFusion();
std::shared_ptr<FusionRule> makeSoftmaxDropoutFusion();
std::shared_ptr<FusionRule> makeBiasSoftmaxFusion();
std::shared_ptr<FusionRule> makeWeightQuantMatMulFusion();
// UB fusion, not in builtinFusionRules(): run by its own pass after engine placement.
std::shared_ptr<FusionRule> makeElementwiseChainFusion();

}  // namespace kiln
