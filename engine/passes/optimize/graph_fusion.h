#pragma once
// GraphFusion (Stage 2, optimize): offers every node to the fusion rules anchored at its op type, until no rule
// matches any more (a fused node can be absorbed by a later match). A rule runs only when the options enable it
// (fusion_switch by rule name; oo_level O1 turns every fusion off). Counters: one per rule (matches) and
// hbm_bytes_saved.
#include <memory>

#include "fusion/fusion_rule.h"
#include "passes/pass.h"

namespace kiln {

// `rules`: the rules to try, in order (built-in first, then plugin rules).
std::unique_ptr<Pass> makeGraphFusionPass(FusionRuleList rules);

}  // namespace kiln
