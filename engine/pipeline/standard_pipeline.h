#pragma once
// The standard pass order of a compile (prepare -> optimize -> compile); see standard_pipeline.cpp for why this order.
#include "fusion/fusion_rule.h"
#include "options/options.h"
#include "passes/pass_manager.h"

namespace kiln {

// The standard pipeline for an option set (which passes, in which order, per the oo_* switches).
// `extraFusionRules` (from plugins) are tried after the built-in rules; plugins' passes are appended by the loader.
void addStandardPasses(PassManager& pm, const Options& options, const FusionRuleList& extraFusionRules = {});

}  // namespace kiln
