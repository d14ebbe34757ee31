// TransposeMatMulFusion: a Transpose that only swaps the last two axes of a MatMul operand becomes a flag of the
// matrix multiply (the Cube reads the operand transposed from L1 at no cost), so the transposed copy is never
// written to HBM:
//   MatMul(Transpose(A, perm=[..., -1, -2]), B)  ->  kiln:FusedMatMul(A, B) trans_a=1     (B side: trans_b)
// Any other perm moves batch axes and is not a matrix transpose: no fusion. Integer MatMuls stay (the Cube's integer
// path has no transposed read here). An existing FusedMatMul absorbs the Transpose too (its flag toggles); the
// Transpose node goes only when the MatMul was its only reader. Runs after AttentionFusion, which needs the Kᵀ
// Transpose in place to recognise attention. A Gemm absorbs a Transpose of its A or B the same way, into its own
// transA / transB (it stays a Gemm: alpha, beta and C are untouched).
#include <algorithm>

#include "fusion/rules/builtin_rules.h"
#include "fusion/rules/matmul_match.h"
#include "ir/graph.h"

namespace kiln {
namespace {

// True when `t` is an ONNX Transpose of a floating tensor of known rank >= 2 that swaps exactly its last two axes.
bool swapsLastTwoAxes(const Node& t) {
  if (!t.hasQualifiedType("Transpose") || !t.input(0)) return false;
  const ValueType& in = t.input(0)->type();
  if (!isFloating(in.dtype) || !in.shape.rankKnown() || in.shape.rank() < 2) return false;
  const auto rank = static_cast<int64_t>(in.shape.rank());
  std::vector<int64_t> perm = t.attrInts("perm");
  if (perm.empty())  // no perm reverses every axis: a swap of the last two only for rank 2
    for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
  if (static_cast<int64_t>(perm.size()) != rank) return false;
  for (int64_t i = 0; i < rank; ++i) {
    const int64_t want = i < rank - 2 ? i : (i == rank - 2 ? rank - 1 : rank - 2);
    if (perm[static_cast<size_t>(i)] != want) return false;
  }
  return true;
}

Value* fusedBias(Node& matmul) {
  return matmul.hasQualifiedType("kiln:FusedMatMul") && matmul.numInputs() > 2 ? matmul.input(2) : nullptr;
}

// The Gemm again, every attribute copied (transA / transB always present so the flag can toggle).
FusedNodeSpec gemmSpec(Node& gemm) {
  FusedNodeSpec spec;
  spec.opType = "Gemm";
  spec.inputs.assign(gemm.inputs().begin(), gemm.inputs().end());
  spec.outputs = {gemm.output(0)};
  spec.attrs = {{"transA", Attribute(gemm.attrInt("transA", 0))}, {"transB", Attribute(gemm.attrInt("transB", 0))}};
  for (const NamedAttribute& a : gemm.attributes())
    if (a.name != "transA" && a.name != "transB") spec.attrs.push_back(a);
  return spec;
}

class TransposeMatMulFusion final : public FusionRule {
 public:
  std::string name() const override { return "TransposeMatMulFusion"; }
  std::vector<std::string> anchorTypes() const override { return {"MatMul", "kiln:FusedMatMul", "Gemm"}; }

  Node* apply(Node& matmul, PassContext&) override {
    if (matmul.numInputs() < 2 || !matmul.input(0) || !matmul.input(1)) return nullptr;
    Node* transposes[2] = {nullptr, nullptr};
    for (size_t side = 0; side < 2; ++side) {
      Node* t = matmul.input(side)->producer();
      if (t && t->graph() == matmul.graph() && swapsLastTwoAxes(*t)) transposes[side] = t;
    }
    if (!transposes[0] && !transposes[1]) return nullptr;
    const bool gemm = matmul.hasQualifiedType("Gemm");
    FusedNodeSpec spec = gemm ? gemmSpec(matmul) : fusedMatMulSpec(matmul, fusedBias(matmul),
                                                                     matmul.attrString("activation", ""),
                                                                     matmul.output(0));
    std::vector<Node*> group{&matmul};
    for (size_t side = 0; side < 2; ++side) {
      Node* t = transposes[side];
      if (!t) continue;
      spec.inputs[side] = t->input(0);
      NamedAttribute& flag = spec.attrs[side];  // trans_a / trans_b, or Gemm's transA / transB: first in both specs
      flag.value = Attribute(int64_t{1} - matmul.attrInt(flag.name, 0));
      // Read only by this MatMul (maybe on both sides): it goes with it.
      const Value* out = t->output(0);
      const bool onlyHere = !out->isGraphOutput() && std::all_of(out->uses().begin(), out->uses().end(),
                                                                 [&](const Use& u) { return u.node == &matmul; });
      if (onlyHere && std::find(group.begin(), group.end(), t) == group.end()) group.push_back(t);
    }
    return fuseNodes(group, spec, name());
  }
};

}  // namespace

std::shared_ptr<FusionRule> makeTransposeMatMulFusion() { return std::make_shared<TransposeMatMulFusion>(); }

}  // namespace kiln
