// BiasSoftmaxFusion (ONNX Runtime's BiasSoftmax): a row-wise Softmax of x + bias, where the bias repeats whole rows,
// becomes one kiln:BiasSoftmax that adds the bias row by row in the Unified Buffer instead of writing the sum to
// HBM first.
//   y = Softmax(Add(x, bias) | Add(bias, x), axis)  ->  y = kiln:BiasSoftmax(x, bias), attribute axis
// The rows are the trailing block [axis, rank) (softmax_match.h: any axis before opset 13, the last one after).
// x is the Add input that already has the sum's shape (same rank, provably same dims), so the bias never enlarges
// it; the bias may broadcast over leading dims (an attention mask [B,1,1,S] over heads and queries) but must match
// the sum on every axis of the block: a bias that broadcasts inside a row (ONNX Runtime's "badaxis" case) is
// refused, since the kernel adds one bias row per softmax row.
#include "ir/fused_node.h"
#include "fusion/match_helpers.h"
#include "fusion/rules/builtin_rules.h"
#include "fusion/rules/softmax_match.h"
#include "ir/graph.h"
#include "ir/model.h"
#include "ir/opdefs/op_registry.h"
#include "passes/pass.h"

namespace kiln {
namespace {

bool provablySameShape(const Shape& a, const Shape& b) {
  if (!a.rankKnown() || !b.rankKnown() || a.rank() != b.rank()) return false;
  for (size_t i = 0; i < a.rank(); ++i)
    if (!provablySameDim(a[i], b[i])) return false;
  return true;
}

// The bias, right-aligned against the sum, has the sum's extent on every axis of the softmax rows.
bool biasCoversRows(const Shape& bias, const Shape& sum, size_t rowAxis) {
  if (!bias.rankKnown() || bias.rank() > sum.rank()) return false;
  const size_t offset = sum.rank() - bias.rank();
  for (size_t i = rowAxis; i < sum.rank(); ++i)
    if (i < offset || !provablySameDim(bias[i - offset], sum[i])) return false;
  return true;
}

class BiasSoftmaxFusion final : public FusionRule {
 public:
  std::string name() const override { return "BiasSoftmaxFusion"; }
  std::vector<std::string> anchorTypes() const override { return {"Softmax"}; }

  Node* apply(Node& softmax, PassContext& ctx) override {
    Node* add = producerOfType(softmax.input(0), "Add");
    if (!add || add->numInputs() != 2 || !hasSingleUse(softmax.input(0)) || !softmax.output(0)) return nullptr;
    const auto axis = softmaxRowAxis(softmax, ctx.model.opsetFor(""));
    if (!axis) return nullptr;
    const Shape& sum = add->output(0)->type().shape;
    for (size_t side = 0; side < 2; ++side) {
      Value* x = add->input(side);
      Value* bias = add->input(1 - side);
      if (!x || !bias || !provablySameShape(x->type().shape, sum)) continue;
      if (!biasCoversRows(bias->type().shape, sum, static_cast<size_t>(*axis))) continue;
      FusedNodeSpec spec;
      spec.opType = "BiasSoftmax";
      spec.domain = std::string(kKilnDomain);
      spec.inputs = {x, bias};
      spec.outputs = {softmax.output(0)};
      spec.attrs = {{"axis", Attribute(*axis)}};
      return fuseNodes({add, &softmax}, spec, name());
    }
    return nullptr;
  }
};

}  // namespace

std::shared_ptr<FusionRule> makeBiasSoftmaxFusion() { return std::make_shared<BiasSoftmaxFusion>(); }

}  // namespace kiln
