// AddLayerNormFusion: the residual Add in front of a LayerNorm (as LayerNormFusion leaves it, or an ONNX
// LayerNormalization the model wrote) becomes one kiln:AddLayerNorm: the sum is normalised while it is still in the
// Unified Buffer instead of being written to HBM and read back. When the residual stream reads the sum as well, it
// is the fused op's second output (add_norm_match.h). Runs after LayerNormFusion, whose result it builds on.
#include "fusion/rules/add_norm_match.h"
#include "fusion/rules/builtin_rules.h"

namespace kiln {
namespace {

class AddLayerNormFusion final : public FusionRule {
 public:
  std::string name() const override { return "AddLayerNormFusion"; }
  std::vector<std::string> anchorTypes() const override { return {"kiln:LayerNorm", "LayerNormalization"}; }
  Node* apply(Node& norm, PassContext&) override { return fuseAddNorm(norm, "AddLayerNorm", name()); }
};

}  // namespace

std::shared_ptr<FusionRule> makeAddLayerNormFusion() { return std::make_shared<AddLayerNormFusion>(); }

}  // namespace kiln
