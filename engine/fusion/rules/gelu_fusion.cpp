// GeluFusion: a written-out GELU (gelu_match.h) that no MatMul + bias precedes becomes one kiln:Gelu(X) with
// approximate "none" (erf form) or "tanh": one Vector kernel instead of five to eight passes over the activation in
// HBM. Runs after MatMulAddGeluFusion, which takes the GELUs it can fold into the Cube.
#include "fusion/fused_node.h"
#include "fusion/rules/builtin_rules.h"
#include "fusion/rules/gelu_match.h"
#include "ir/graph.h"
#include "ir/opdefs/op_registry.h"

namespace kiln {
namespace {

class GeluFusion final : public FusionRule {
 public:
  std::string name() const override { return "GeluFusion"; }
  std::vector<std::string> anchorTypes() const override { return {"Mul"}; }

  Node* apply(Node& anchor, PassContext&) override {
    const auto gelu = matchWrittenOutGelu(anchor);
    if (!gelu || !isFloating(gelu->x->type().dtype)) return nullptr;
    FusedNodeSpec spec;
    spec.opType = "Gelu";
    spec.domain = std::string(kKilnDomain);
    spec.inputs = {gelu->x};
    spec.outputs = {anchor.output(0)};
    spec.attrs = {{"approximate", Attribute(std::string(gelu->tanh ? "tanh" : "none"))}};
    return fuseNodes(gelu->nodes, spec, name());
  }
};

}  // namespace

std::shared_ptr<FusionRule> makeGeluFusion() { return std::make_shared<GeluFusion>(); }

}  // namespace kiln
