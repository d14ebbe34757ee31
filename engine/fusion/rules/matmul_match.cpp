#include "fusion/rules/matmul_match.h"

#include "ir/graph.h"
#include "ir/opdefs/op_registry.h"
#include "ir/tensor.h"

namespace kiln {

using namespace pattern;

pattern::Op plainMatMul() {
  return op(std::vector<std::string>{"MatMul", "kiln:FusedMatMul"}, {any("a"), any("b")})
      .where([](const Node& n) { return n.numInputs() == 2 && n.attrString("activation", "").empty(); })
      .bind("matmul");
}

pattern::Op matMulPlusConstant() {
  return op("Add", {from(plainMatMul(), "product"), constant("bias")}).commutative().bind("add");
}

bool isLastAxisBias(const Value& bias, const Value& product) {
  const Tensor* t = constantOf(&bias);
  const Shape& s = product.type().shape;
  if (!t || !isFloating(t->dtype()) || t->dtype() != product.type().dtype) return false;
  if (!s.rankKnown() || s.rank() == 0 || !s[s.rank() - 1].isStatic()) return false;
  const auto& d = t->dims();
  if (d.empty() || d.size() > s.rank() || d.back() != s[s.rank() - 1].value) return false;
  for (size_t i = 0; i + 1 < d.size(); ++i)
    if (d[i] != 1) return false;
  return true;
}

FusedNodeSpec fusedMatMulSpec(const Node& matmul, Value* bias, const std::string& activation, Value* out) {
  FusedNodeSpec spec;
  spec.opType = "FusedMatMul";
  spec.domain = std::string(kKilnDomain);
  spec.name = matmul.name();
  spec.inputs = {matmul.input(0), matmul.input(1)};
  if (bias) spec.inputs.push_back(bias);
  spec.outputs = {out};
  spec.attrs = {{"trans_a", Attribute(matmul.attrInt("trans_a", 0))},
                {"trans_b", Attribute(matmul.attrInt("trans_b", 0))},
                {"alpha", Attribute(matmul.attrFloat("alpha", 1.0f))},
                {"activation", Attribute(activation)}};
  return spec;
}

}  // namespace kiln
