// LayerNormFusion: layer normalisation as exporters write it out, nine element-wise and reduce ops that each read
// and write the whole activation in HBM, becomes one kiln:LayerNorm kernel that keeps the row in the Unified Buffer.
//   m = ReduceMean(x, axes)   d = Sub(x, m)   v = ReduceMean(Pow(d, 2) | Mul(d, d), axes)
//   y = Div(d, Sqrt(Add(v, eps) | v))  [ * gamma ]  [ + beta ]   (no Add: eps 0, simplified away)
// The axes must be the trailing dims (LayerNormalization's `axis` form); gamma and beta must be constants shaped
// like the normalised dims (or broadcast over them as a scalar) so the fused op means the same thing.
#include "ir/fused_node.h"
#include "fusion/match_helpers.h"
#include "fusion/rules/builtin_rules.h"
#include "fusion/rules/norm_match.h"
#include "ir/graph.h"
#include "ir/opdefs/op_registry.h"
#include "ir/tensor.h"
#include "passes/constant_value.h"

namespace kiln {
namespace {

class LayerNormFusion final : public FusionRule {
 public:
  std::string name() const override { return "LayerNormFusion"; }
  std::vector<std::string> anchorTypes() const override { return {"Div"}; }

  // Anchored at the Div (the one op every form has); extends forward over the optional Mul(gamma) and Add(beta).
  Node* apply(Node& div, PassContext&) override {
    if (!div.domain().empty() || div.numInputs() != 2) return nullptr;
    Value* d = div.input(0);
    Node* sqrt = producerOfType(div.input(1), "Sqrt");
    Node* sub = producerOfType(d, "Sub");
    if (!sqrt || !sub || !hasSingleUse(div.input(1))) return nullptr;
    Value* x = sub->input(0);
    Node* mean = producerOfType(sub->input(1), "ReduceMean");
    if (!mean || mean->input(0) != x || !hasSingleUse(sub->input(1))) return nullptr;
    const auto& shape = x->type().shape;
    if (!shape.rankKnown()) return nullptr;
    const auto rank = static_cast<int64_t>(shape.rank());
    const auto axis = trailingReduceAxis(*mean, rank);
    if (!axis) return nullptr;
    // Variance branch: Add(ReduceMean(Pow(d, 2) | Mul(d, d)), eps) under the Sqrt.
    const auto ms = matchMeanSquarePlusEps(sqrt->input(0));
    if (!ms || ms->squared != d || trailingReduceAxis(*ms->mean, rank) != axis) return nullptr;
    const bool isMul = ms->square->hasQualifiedType("Mul");
    // d feeds exactly the square and the Div (a Mul(d, d) counts twice).
    if (d->isGraphOutput() || d->uses().size() != (isMul ? 3u : 2u)) return nullptr;

    const auto dims = trailingDims(shape, *axis);
    if (!dims) return nullptr;
    const std::vector<int64_t>& normDims = *dims;
    std::vector<Node*> group{mean, sub};
    for (Node* n : ms->nodes()) group.push_back(n);
    group.insert(group.end(), {sqrt, &div});
    Value* out = div.output(0);
    // Optional affine tail: Mul(·, gamma) then Add(·, beta).
    Value* gamma = absorbParameter(out, group, "Mul", normDims);
    Value* beta = gamma ? absorbParameter(out, group, "Add", normDims) : nullptr;
    return fuseNorm("LayerNorm", group, {x, gamma, beta}, out, *axis, ms->epsilon, name());
  }
};

}  // namespace

std::shared_ptr<FusionRule> makeLayerNormFusion() { return std::make_shared<LayerNormFusion>(); }

}  // namespace kiln
