// ReshapeGemmReshapeFusion: a Linear layer exported through 2-D Gemm — GPT-2's Conv1D, TF/Keras Dense on 3-D
// inputs, older PyTorch exports — flattens the leading axes, multiplies and restores them:
//   Reshape(x [..., K] -> [M, K]) -> Gemm(·, W, bias) -> Reshape([M, N] -> [..., N])
//     ->  kiln:FusedMatMul(x, W, bias, trans_b = Gemm's transB)          (output [..., N], the same values)
// The Cube multiplies batched operands directly, so the two reshapes (host ops in GE, but each a node, a tensor
// and, around a FRACTAL_NZ matmul, a layout conversion on both sides) go. Only alpha = beta = 1 and transA = 0,
// a constant 1-D bias (or none), static shapes, and a second Reshape that gives back exactly x's leading extents.
#include "fusion/rules/builtin_rules.h"
#include "fusion/rules/matmul_match.h"
#include "ir/graph.h"
#include "ir/opdefs/op_registry.h"

namespace kiln {
namespace {

const Node* soleReader(const Value* v) {
  if (!v || v->uses().size() != 1 || v->isGraphOutput()) return nullptr;
  return v->uses().front().node;
}

class ReshapeGemmReshapeFusion final : public FusionRule {
 public:
  std::string name() const override { return "ReshapeGemmReshapeFusion"; }
  std::vector<std::string> anchorTypes() const override { return {"Gemm"}; }

  Node* apply(Node& gemm, PassContext&) override {
    if (!gemm.domain().empty() || gemm.attrInt("transA", 0) != 0 || gemm.attrFloat("alpha", 1.0f) != 1.0f ||
        gemm.attrFloat("beta", 1.0f) != 1.0f)
      return nullptr;
    Node* flatten = gemm.input(0) ? gemm.input(0)->producer() : nullptr;
    if (!flatten || flatten->opType() != "Reshape" || !flatten->domain().empty()) return nullptr;
    if (soleReader(flatten->output(0)) != &gemm) return nullptr;
    const Node* restoreReader = soleReader(gemm.output(0));
    if (!restoreReader || restoreReader->opType() != "Reshape" || !restoreReader->domain().empty()) return nullptr;
    Node* restore = const_cast<Node*>(restoreReader);
    Value* x = flatten->input(0);
    Value* w = gemm.input(1);
    Value* bias = gemm.input(2);
    const auto xs = x->type().shape.staticExtents();
    const auto ys = restore->output(0)->type().shape.staticExtents();
    const auto ws = w->type().shape.staticExtents();
    if (!xs || !ys || !ws || xs->size() < 3 || ys->size() != xs->size() || ws->size() != 2) return nullptr;
    const int64_t k = xs->back(), n = ys->back();
    const bool transB = gemm.attrInt("transB", 0) != 0;
    if ((*ws)[transB ? 1 : 0] != k || (*ws)[transB ? 0 : 1] != n) return nullptr;
    for (size_t i = 0; i + 1 < xs->size(); ++i)
      if ((*xs)[i] != (*ys)[i]) return nullptr;  // the leading axes come back as they were
    if (bias) {
      const auto bs = bias->type().shape.staticExtents();
      if (!bias->constant() || !bs || bs->size() != 1 || (*bs)[0] != n) return nullptr;
    }
    FusedNodeSpec spec;
    spec.opType = "FusedMatMul";
    spec.domain = std::string(kKilnDomain);
    spec.name = gemm.name();
    spec.inputs = {x, w};
    if (bias) spec.inputs.push_back(bias);
    spec.outputs = {restore->output(0)};
    spec.attrs = {{"trans_a", Attribute(int64_t{0})},
                  {"trans_b", Attribute(int64_t{transB ? 1 : 0})},
                  {"alpha", Attribute(1.0f)},
                  {"activation", Attribute(std::string())}};
    return fuseNodes({flatten, &gemm, restore}, spec, name());
  }
};

}  // namespace

std::shared_ptr<FusionRule> makeReshapeGemmReshapeFusion() { return std::make_shared<ReshapeGemmReshapeFusion>(); }

}  // namespace kiln
