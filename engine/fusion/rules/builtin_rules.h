#pragma once
// Kiln's built-in graph fusion rules, one per file in this folder, in the order GraphFusion tries them.
#include "fusion/fusion_rule.h"

namespace kiln {

FusionRuleList builtinFusionRules();

std::shared_ptr<FusionRule> makeConvBiasAddFusion();
std::shared_ptr<FusionRule> makeLayerNormFusion();
std::shared_ptr<FusionRule> makeRmsNormFusion();
std::shared_ptr<FusionRule> makeAttentionFusion();
std::shared_ptr<FusionRule> makeSoftmaxDropoutFusion();
std::shared_ptr<FusionRule> makeBiasSoftmaxFusion();
// UB fusion, not in builtinFusionRules(): run by its own pass after engine placement.
std::shared_ptr<FusionRule> makeElementwiseChainFusion();

}  // namespace kiln
