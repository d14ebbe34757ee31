// MatMulBiasAddFusion: a constant bias added to a MatMul's output is accumulated by the Cube with the product
// instead of a Vector pass over the whole output in HBM:
//   Add(MatMul(A, B), bias)  ->  kiln:FusedMatMul(A, B, bias)
// The bias must broadcast along the LAST axis only ([N] or [1, ..., N]); any other constant (per row, full tensor)
// is not a bias and stays an Add. Gemm already is this fused form and is left alone.
#include "fusion/rules/builtin_rules.h"
#include "fusion/rules/matmul_match.h"
#include "ir/graph.h"

namespace kiln {
namespace {

class MatMulBiasAddFusion final : public FusionRule {
 public:
  std::string name() const override { return "MatMulBiasAddFusion"; }
  std::vector<std::string> anchorTypes() const override { return {"Add"}; }

  Node* apply(Node& add, PassContext&) override {
    static const pattern::Op p = matMulPlusConstant();
    const auto m = pattern::match(p, add);
    if (!m || !isLastAxisBias(*m->value("bias"), *m->value("product"))) return nullptr;
    // The Add must not broadcast the product up (a bias of higher rank would): it keeps the product's shape.
    if (!(add.output(0)->type().shape == m->value("product")->type().shape)) return nullptr;
    return fuseNodes(m->nodes(), fusedMatMulSpec(*m->node("matmul"), m->value("bias"), "", add.output(0)), name());
  }
};

}  // namespace

std::shared_ptr<FusionRule> makeMatMulBiasAddFusion() { return std::make_shared<MatMulBiasAddFusion>(); }

}  // namespace kiln
