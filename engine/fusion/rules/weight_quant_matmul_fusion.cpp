// WeightQuantMatMulFusion: a weight-only quantized linear layer, as exporters write it (int4 / int8 weights with a
// per-channel or blocked scale, opset 21's DequantizeLinear), becomes one kiln:WeightQuantMatMul — GE's
// WeightQuantBatchMatmulV2: the Cube reads the quantized weights and dequantizes them on the way in, so the plan and
// the timeline count int4 / int8 bytes, not fp32 ones.
//   MatMul(A, DequantizeLinear(Wq, scale [, zero_point]))  ->  kiln:WeightQuantMatMul(A, Wq, scale [, zero_point])
// ConstantFolding leaves such a DequantizeLinear alone (constant_folding.cpp); the fused op keeps its axis and
// block_size. Only when the weights are constant and the DequantizeLinear has no other reader.
#include "fusion/rules/builtin_rules.h"
#include "ir/fused_node.h"
#include "ir/graph.h"
#include "ir/opdefs/op_registry.h"

namespace kiln {
namespace {

class WeightQuantMatMulFusion final : public FusionRule {
 public:
  std::string name() const override { return "WeightQuantMatMulFusion"; }
  std::vector<std::string> anchorTypes() const override { return {"MatMul"}; }

  Node* apply(Node& matmul, PassContext&) override {
    if (!matmul.domain().empty() || matmul.numInputs() != 2 || !matmul.input(0) || !matmul.input(1)) return nullptr;
    Value* w = matmul.input(1);
    Node* dq = w->producer();
    if (!dq || dq->opType() != "DequantizeLinear" || !dq->domain().empty() || w->uses().size() != 1 ||
        w->isGraphOutput())
      return nullptr;
    Value* wq = dq->input(0);
    if (!wq || !wq->constant() || !dq->input(1)) return nullptr;
    const DType t = wq->type().dtype;
    if (!(t == DType::Int4 || t == DType::UInt4 || t == DType::Int8 || t == DType::UInt8)) return nullptr;
    const Shape& ws = wq->type().shape;
    if (!ws.rankKnown() || ws.rank() != 2) return nullptr;  // [K, N] weights: what the fused kernel multiplies
    FusedNodeSpec spec;
    spec.opType = "WeightQuantMatMul";
    spec.domain = std::string(kKilnDomain);
    spec.name = matmul.name();
    spec.inputs = {matmul.input(0), wq, dq->input(1)};
    if (dq->numInputs() > 2 && dq->input(2)) spec.inputs.push_back(dq->input(2));
    spec.outputs = {matmul.output(0)};
    spec.attrs = {{"axis", Attribute(dq->attrInt("axis", 1))}, {"block_size", Attribute(dq->attrInt("block_size", 0))}};
    return fuseNodes({dq, &matmul}, spec, name());
  }
};

}  // namespace

std::shared_ptr<FusionRule> makeWeightQuantMatMulFusion() { return std::make_shared<WeightQuantMatMulFusion>(); }

}  // namespace kiln
