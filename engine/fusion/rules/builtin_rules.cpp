#include "fusion/rules/builtin_rules.h"

namespace kiln {

FusionRuleList builtinFusionRules() {
  return {
      makeAttentionFusion(),  // first: smaller rules would take its MatMuls and Transposes apart
      makeSoftmaxDropoutFusion(),
      makeBiasSoftmaxFusion(),
      makeConvBiasAddFusion(),
      makeLayerNormFusion(),
      makeRmsNormFusion(),
  };
}

}  // namespace kiln
