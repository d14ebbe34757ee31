#pragma once
// Kiln's built-in graph fusion rules, one per file in this folder, in the order GraphFusion tries them.
#include "fusion/fusion_rule.h"

namespace kiln {

FusionRuleList builtinFusionRules();

std::shared_ptr<FusionRule> makeConvBiasAddFusion();
std::shared_ptr<FusionRule> makeLayerNormFusion();
std::shared_ptr<FusionRule> makeRmsNormFusion();

}  // namespace kiln
