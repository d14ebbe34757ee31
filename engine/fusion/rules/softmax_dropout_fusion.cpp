// SoftmaxDropoutFusion: a Softmax read only by a Dropout that is live (training, or its mask read) becomes one
// kiln:SoftmaxDropout, which drops the probabilities while they are still in the Unified Buffer instead of writing
// them to HBM and reading them back.
//   y [, mask] = Dropout(Softmax(x, axis) [, ratio [, training_mode]])  ->  kiln:SoftmaxDropout(x, ratio,
//   training_mode) with attributes axis (the first axis of the softmax rows, softmax_match.h) and Dropout's own
//   (seed; ratio before opset 12).
// An inference Dropout (training_mode absent or constant false, mask unused) is NoOpRemoval's: it is left alone,
// so the rule fires only where a real dropout happens.
#include "ir/fused_node.h"
#include "fusion/match_helpers.h"
#include "fusion/rules/builtin_rules.h"
#include "fusion/rules/softmax_match.h"
#include "ir/graph.h"
#include "ir/model.h"
#include "ir/opdefs/op_registry.h"
#include "passes/constant_value.h"
#include "passes/pass.h"

namespace kiln {
namespace {

bool used(const Value* v) { return v && (v->hasUses() || v->isGraphOutput()); }

// A Dropout that computes something: its mask is read, or training_mode is not a constant false.
bool isLiveDropout(const Node& dropout) {
  if (used(dropout.output(1))) return true;
  const Value* training = dropout.input(2);
  if (!training) return false;
  return training->isGraphInput() || !isConstantFilledWith(training, 0.0);
}

class SoftmaxDropoutFusion final : public FusionRule {
 public:
  std::string name() const override { return "SoftmaxDropoutFusion"; }
  std::vector<std::string> anchorTypes() const override { return {"Dropout"}; }

  Node* apply(Node& dropout, PassContext& ctx) override {
    Node* softmax = producerOfType(dropout.input(0), "Softmax");
    if (!softmax || !hasSingleUse(dropout.input(0)) || !dropout.output(0) || !isLiveDropout(dropout)) return nullptr;
    const auto axis = softmaxRowAxis(*softmax, ctx.model.opsetFor(""));
    if (!axis) return nullptr;
    FusedNodeSpec spec;
    spec.opType = "SoftmaxDropout";
    spec.domain = std::string(kKilnDomain);
    spec.inputs = {softmax->input(0), dropout.input(1), dropout.input(2)};
    while (spec.inputs.size() > 1 && !spec.inputs.back()) spec.inputs.pop_back();
    spec.outputs = {dropout.output(0)};
    if (used(dropout.output(1))) spec.outputs.push_back(dropout.output(1));
    spec.attrs = dropout.attributes();
    spec.attrs.push_back({"axis", Attribute(*axis)});
    return fuseNodes({softmax, &dropout}, spec, name());
  }
};

}  // namespace

std::shared_ptr<FusionRule> makeSoftmaxDropoutFusion() { return std::make_shared<SoftmaxDropoutFusion>(); }

}  // namespace kiln
