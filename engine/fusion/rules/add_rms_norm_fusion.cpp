// AddRmsNormFusion: the residual Add in front of a kiln:RmsNorm (as RmsNormFusion leaves it) or of ONNX's own
// RMSNormalization (opset 23) becomes one
// kiln:AddRmsNorm: the sum is normalised while it is still in the Unified Buffer instead of being written to HBM and
// read back. In pre-norm models (LLaMA) the residual stream reads the sum as well: it is the fused op's second
// output (add_norm_match.h). Runs after RmsNormFusion, whose result it builds on.
#include "fusion/rules/add_norm_match.h"
#include "fusion/rules/builtin_rules.h"

namespace kiln {
namespace {

class AddRmsNormFusion final : public FusionRule {
 public:
  std::string name() const override { return "AddRmsNormFusion"; }
  std::vector<std::string> anchorTypes() const override { return {"kiln:RmsNorm", "RMSNormalization"}; }
  Node* apply(Node& norm, PassContext&) override { return fuseAddNorm(norm, "AddRmsNorm", name()); }
};

}  // namespace

std::shared_ptr<FusionRule> makeAddRmsNormFusion() { return std::make_shared<AddRmsNormFusion>(); }

}  // namespace kiln
