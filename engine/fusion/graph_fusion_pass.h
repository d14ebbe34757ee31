#pragma once
// GraphFusion (Stage 2, optimize): runs the fusion rules in list order (their priority), each swept over the whole
// graph to a fixpoint, and repeats the list while any rule still matches (a fused node can be absorbed by a later
// match). A rule runs only when the options enable it
// (fusion_switch by rule name; oo_level O1 turns every fusion off). Counters: one per rule (matches) and
// hbm_bytes_saved.
#include <memory>
#include <string>

#include "fusion/fusion_rule.h"
#include "passes/pass.h"

namespace kiln {

// `rules`: the rules to try, in priority order (built-in first, then plugin rules). `passName` lets the same
// driver appear twice in a pipeline (graph fusion, then UB fusion after engine placement).
std::unique_ptr<Pass> makeGraphFusionPass(FusionRuleList rules, std::string passName = "GraphFusion");

}  // namespace kiln
