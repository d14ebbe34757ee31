// LayerNormFusion: layer normalisation as exporters write it out, nine element-wise and reduce ops that each read
// and write the whole activation in HBM, becomes one kiln:LayerNorm kernel that keeps the row in the Unified Buffer.
//   m = ReduceMean(x, axes)   d = Sub(x, m)   v = ReduceMean(Pow(d, 2) | Mul(d, d), axes)
//   y = Div(d, Sqrt(Add(v, eps)))  [ * gamma ]  [ + beta ]
// The axes must be the trailing dims (LayerNormalization's `axis` form); gamma and beta must be constants shaped
// like the normalised dims (or broadcast over them as a scalar) so the fused op means the same thing.
#include <algorithm>
#include <optional>

#include "fusion/fused_node.h"
#include "fusion/match_helpers.h"
#include "fusion/rules/builtin_rules.h"
#include "ir/graph.h"
#include "ir/opdefs/op_registry.h"
#include "ir/tensor.h"
#include "passes/constant_value.h"

namespace kiln {
namespace {

// The first normalised axis (non-negative) when `reduce` averages over trailing axes with keepdims, else nullopt.
std::optional<int64_t> trailingAxis(const Node& reduce, int64_t rank) {
  if (reduce.opType() != "ReduceMean" || !reduce.domain().empty() || reduce.attrInt("keepdims", 1) != 1)
    return std::nullopt;
  std::vector<int64_t> axes = reduce.attrInts("axes");
  if (axes.empty() && reduce.numInputs() > 1) {  // opset 18: axes as a constant input
    const Tensor* t = constantValueOf(reduce.input(1));
    if (!t) return std::nullopt;
    axes = t->toInt64();
  }
  if (axes.empty() || rank <= 0) return std::nullopt;
  for (auto& a : axes) {
    if (a < 0) a += rank;
    if (a < 0 || a >= rank) return std::nullopt;
  }
  std::sort(axes.begin(), axes.end());
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] != rank - static_cast<int64_t>(axes.size() - i)) return std::nullopt;
  return axes.front();
}

// The other input of a binary `node` besides `v`, or null when `v` is not an input.
Value* otherInput(const Node& node, const Value* v) {
  if (node.numInputs() != 2) return nullptr;
  if (node.input(0) == v) return node.input(1);
  if (node.input(1) == v) return node.input(0);
  return nullptr;
}

// True when `p` is a constant whose dims are the normalised dims (right-aligned) or a single element.
bool fitsNormalisedDims(const Value* p, const std::vector<int64_t>& normDims) {
  const Tensor* t = constantValueOf(p);
  if (!t) return false;
  const auto& d = t->dims();
  if (t->numel() == 1) return true;
  if (d.size() > normDims.size()) {
    for (size_t i = 0; i + normDims.size() < d.size(); ++i)
      if (d[i] != 1) return false;
  }
  const size_t n = std::min(d.size(), normDims.size());
  for (size_t i = 0; i < n; ++i)
    if (d[d.size() - 1 - i] != normDims[normDims.size() - 1 - i]) return false;
  return d.size() >= normDims.size();
}

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
    const auto axis = trailingAxis(*mean, rank);
    if (!axis) return nullptr;
    // Variance branch: Add(ReduceMean(Pow(d, 2) | Mul(d, d)), eps) under the Sqrt.
    Node* addEps = producerOfType(sqrt->input(0), "Add");
    if (!addEps || !hasSingleUse(sqrt->input(0))) return nullptr;
    Node* var = nullptr;
    Value* epsValue = nullptr;
    for (size_t side = 0; side < 2 && !var; ++side)
      if (Node* r = producerOfType(addEps->input(side), "ReduceMean")) {
        var = r;
        epsValue = addEps->input(1 - side);
      }
    const Tensor* eps = epsValue ? constantValueOf(epsValue) : nullptr;
    if (!var || !eps || eps->numel() != 1 || !hasSingleUse(var->output(0)) || trailingAxis(*var, rank) != axis)
      return nullptr;
    Node* square = var->input(0) ? var->input(0)->producer() : nullptr;
    if (!square || !hasSingleUse(var->input(0))) return nullptr;
    const bool isPow = square->qualifiedType() == "Pow" && square->input(0) == d && isConstantFilledWith(square->input(1), 2.0);
    const bool isMul = square->qualifiedType() == "Mul" && square->input(0) == d && square->input(1) == d;
    if (!isPow && !isMul) return nullptr;
    // d feeds exactly the square and the Div (a Mul(d, d) counts twice).
    if (d->isGraphOutput() || d->uses().size() != (isMul ? 3u : 2u)) return nullptr;

    std::vector<int64_t> normDims;
    for (int64_t i = *axis; i < rank; ++i) {
      if (!shape[static_cast<size_t>(i)].isStatic()) return nullptr;
      normDims.push_back(shape[static_cast<size_t>(i)].value);
    }
    std::vector<Node*> group{mean, sub, square, var, addEps, sqrt, &div};
    Value* out = div.output(0);
    Value* gamma = nullptr;
    Value* beta = nullptr;
    // Optional affine tail: Mul(·, gamma) then Add(·, beta), each the only reader of what it extends.
    if (hasSingleUse(out))
      if (Node* mul = out->uses().front().node; mul->qualifiedType() == "Mul")
        if (Value* g = otherInput(*mul, out); g && fitsNormalisedDims(g, normDims)) {
          gamma = g;
          group.push_back(mul);
          out = mul->output(0);
          if (hasSingleUse(out))
            if (Node* add = out->uses().front().node; add->qualifiedType() == "Add")
              if (Value* b = otherInput(*add, out); b && fitsNormalisedDims(b, normDims)) {
                beta = b;
                group.push_back(add);
                out = add->output(0);
              }
        }
    FusedNodeSpec spec;
    spec.opType = "LayerNorm";
    spec.domain = std::string(kKilnDomain);
    spec.inputs = {x, gamma, beta};
    while (!spec.inputs.empty() && !spec.inputs.back()) spec.inputs.pop_back();
    spec.outputs = {out};
    spec.attrs = {{"axis", Attribute(*axis)}, {"epsilon", Attribute(static_cast<float>(eps->toDouble().at(0)))}};
    return fuseNodes(group, spec, name());
  }
};

}  // namespace

std::shared_ptr<FusionRule> makeLayerNormFusion() { return std::make_shared<LayerNormFusion>(); }

}  // namespace kiln
