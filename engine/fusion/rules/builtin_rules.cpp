#include "fusion/rules/builtin_rules.h"

namespace kiln {

FusionRuleList builtinFusionRules() {
  return {
      makeConvBiasAddFusion(),
      makeLayerNormFusion(),
      makeRmsNormFusion(),
  };
}

}  // namespace kiln
