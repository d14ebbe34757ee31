// GeluFusion: a GELU that no MatMul precedes becomes one kiln:Gelu(X [, B]) with approximate "none" (erf form) or
// "tanh": one Vector kernel instead of five to eight passes over the activation in HBM. Two shapes fire:
//   - a written-out GELU (gelu_match.h), with or without a bias Add before it;
//   - ONNX's own Gelu (opset 20) after a bias Add (ORT's BiasGelu): the Add joins the kernel.
// A bias is an Add of a rank-1 tensor as long as X's last axis (a constant or an input); it becomes input B.
// Runs after MatMulAddGeluFusion, which takes the GELUs it can fold into the Cube.
#include <algorithm>

#include "ir/fused_node.h"
#include "fusion/rules/builtin_rules.h"
#include "fusion/rules/gelu_match.h"
#include "ir/graph.h"
#include "ir/opdefs/op_registry.h"

namespace kiln {
namespace {

struct BiasAdd {
  Node* add = nullptr;
  Value* x = nullptr;
  Value* bias = nullptr;
};

// The Add producing `v` when it adds a last-axis bias and every reader of its result is in `readers`.
std::optional<BiasAdd> biasAddBefore(Value* v, const std::vector<Node*>& readers) {
  Node* add = v->producer();
  if (!add || add->opType() != "Add" || !add->domain().empty() || add->numInputs() != 2 || v->isGraphOutput())
    return std::nullopt;
  for (const Use& u : v->uses())
    if (std::find(readers.begin(), readers.end(), u.node) == readers.end()) return std::nullopt;
  const Shape& out = v->type().shape;
  if (!out.rankKnown() || out.rank() < 1 || !out.dims().back().isStatic()) return std::nullopt;
  for (size_t b = 0; b < 2; ++b) {
    Value* bias = add->input(b);
    Value* x = add->input(1 - b);
    const Shape& bs = bias->type().shape;
    if (bs.rankKnown() && bs.rank() == 1 && bs.dims()[0] == out.dims().back() && x->type().shape == out &&
        bias->type().dtype == x->type().dtype)
      return BiasAdd{add, x, bias};
  }
  return std::nullopt;
}

class GeluFusion final : public FusionRule {
 public:
  std::string name() const override { return "GeluFusion"; }
  std::vector<std::string> anchorTypes() const override { return {"Mul", "Gelu"}; }

  Node* apply(Node& anchor, PassContext&) override {
    std::vector<Node*> group;
    Value* x = nullptr;
    bool tanh = false;
    if (anchor.opType() == "Gelu") {
      if (!anchor.domain().empty() || anchor.numInputs() != 1) return nullptr;
      group = {&anchor};
      x = anchor.input(0);
      tanh = anchor.attrString("approximate", "none") == "tanh";
    } else {
      auto gelu = matchWrittenOutGelu(anchor);
      if (!gelu) return nullptr;
      group = std::move(gelu->nodes);
      x = gelu->x;
      tanh = gelu->tanh;
    }
    if (!isFloating(x->type().dtype)) return nullptr;
    const auto bias = biasAddBefore(x, group);
    // ONNX's Gelu alone is already one op: renaming it would be no fusion.
    if (!bias && anchor.opType() == "Gelu") return nullptr;
    FusedNodeSpec spec;
    spec.opType = "Gelu";
    spec.domain = std::string(kKilnDomain);
    spec.inputs = {x};
    if (bias) {
      group.push_back(bias->add);
      spec.inputs = {bias->x, bias->bias};
    }
    spec.outputs = {anchor.output(0)};
    spec.attrs = {{"approximate", Attribute(std::string(tanh ? "tanh" : "none"))}};
    return fuseNodes(group, spec, name());
  }
};

}  // namespace

std::shared_ptr<FusionRule> makeGeluFusion() { return std::make_shared<GeluFusion>(); }

}  // namespace kiln
