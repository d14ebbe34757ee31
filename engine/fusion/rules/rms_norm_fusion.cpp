// RmsNormFusion: RMS normalisation as LLaMA-family exports write it out becomes one kiln:RmsNorm kernel.
//   r = Sqrt(Add(ReduceMean(Pow(x, 2) | Mul(x, x), axes), eps))   (or without the Add: eps 0)
//   y = Mul(x, Reciprocal(r)) | Div(x, r)   [ * gamma ]
// Anchored at the Sqrt. A centred x (x = Sub(a, ReduceMean(a))) is a LayerNorm and is left to LayerNormFusion.
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

class RmsNormFusion final : public FusionRule {
 public:
  std::string name() const override { return "RmsNormFusion"; }
  std::vector<std::string> anchorTypes() const override { return {"Sqrt"}; }

  Node* apply(Node& sqrt, PassContext&) override {
    const auto ms = matchMeanSquarePlusEps(sqrt.input(0));
    if (!ms || !hasSingleUse(sqrt.output(0))) return nullptr;
    Value* x = ms->squared;
    if (!x->type().shape.rankKnown()) return nullptr;
    if (Node* sub = producerOfType(x, "Sub"); sub && producerOfType(sub->input(1), "ReduceMean")) return nullptr;
    const auto rank = static_cast<int64_t>(x->type().shape.rank());
    const auto axis = trailingReduceAxis(*ms->mean, rank);
    if (!axis) return nullptr;

    // The scaling: Div(x, r), or Mul(x, Reciprocal(r)) with x on either side.
    std::vector<Node*> group = ms->nodes();
    group.push_back(&sqrt);
    Node* consumer = sqrt.output(0)->uses().front().node;
    Node* scale = nullptr;
    if (consumer->hasQualifiedType("Div") && consumer->input(0) == x && consumer->input(1) == sqrt.output(0)) {
      scale = consumer;
    } else if (consumer->hasQualifiedType("Reciprocal") && hasSingleUse(consumer->output(0))) {
      group.push_back(consumer);
      Node* mul = consumer->output(0)->uses().front().node;
      if (mul->hasQualifiedType("Mul") && otherBinaryInput(*mul, consumer->output(0)) == x) scale = mul;
    }
    if (!scale) return nullptr;
    group.push_back(scale);
    // x is read by the square (twice for Mul(x, x)), the scaling, and possibly others outside — that is fine: x is
    // an input of the fused node, not an intermediate.
    Value* out = scale->output(0);
    const auto normDims = trailingDims(x->type().shape, *axis);
    Value* gamma = normDims ? absorbParameter(out, group, "Mul", *normDims) : nullptr;
    return fuseNorm("RmsNorm", group, {x, gamma}, out, *axis, ms->epsilon, name());
  }
};

}  // namespace

std::shared_ptr<FusionRule> makeRmsNormFusion() { return std::make_shared<RmsNormFusion>(); }

}  // namespace kiln
