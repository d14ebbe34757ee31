// Kiln's softmax-based fused ops, created by AttentionFusion, SoftmaxDropoutFusion and BiasSoftmaxFusion:
//   Attention(Q, K, V [, Mask]) -> Y       Q [B,Sq,H*D], K [B,Skv,H*D], V [B,Skv,H*Dv], Mask broadcastable to
//                                           [B,H,Sq,Skv]; Y [B,Sq,H*Dv]. Attributes num_heads, scale and, for a
//                                           bool Mask, mask_filter_value. With s = Q·Kᵀ·scale per head:
//                                           float Mask: Y = merge_heads(softmax(s + Mask) · V);
//                                           bool Mask: s is mask_filter_value where Mask is true (masked_fill).
//   SoftmaxDropout(X [, ratio [, training_mode]]) -> Y [, mask]   Dropout(Softmax(X)) with Dropout's inputs.
//   BiasSoftmax(X, Bias) -> Y              Softmax(X + Bias) where Bias broadcasts into X over whole rows.
// In both, `axis` is the first axis of the rows: the softmax normalises over the trailing block [axis, rank).
#include <stdexcept>

#include "ir/graph.h"
#include "ir/opdefs/op_registry.h"

namespace kiln {
namespace {

// Y takes Q's batch and sequence and V's hidden width (H*Dv), when the ranks agree; else Q's type as is.
void inferAttention(Node& n) {
  const Value* q = n.input(0);
  const Value* v = n.input(2);
  if (!q || !n.input(1) || !v || !n.output(0)) throw std::runtime_error("Attention needs Q, K, V and an output");
  if (n.attrInt("num_heads", 0) <= 0) throw std::runtime_error("Attention needs a positive num_heads");
  ValueType out = q->type();
  const Shape& vs = v->type().shape;
  if (out.shape.rankKnown() && vs.rankKnown() && out.shape.rank() == 3 && vs.rank() == 3) out.shape.dims()[2] = vs[2];
  n.output(0)->setType(out);
}

// Y has X's type; Dropout's optional mask output is a bool tensor of X's shape.
void inferSoftmaxLike(Node& n) {
  const Value* x = n.input(0);
  if (!x || !n.output(0)) throw std::runtime_error(n.opType() + " needs an input X and an output");
  n.output(0)->setType(x->type());
  if (Value* mask = n.output(1)) mask->setType(ValueType::tensor(DType::Bool, x->type().shape));
}

OpDef kilnOp(const char* type, int minIn, int maxIn, ComputeUnit unit, std::vector<std::string> inputs) {
  OpDef d;
  d.domain = std::string(kKilnDomain);
  d.type = type;
  d.minInputs = minIn;
  d.maxInputs = maxIn;
  d.minOutputs = d.maxOutputs = 1;
  d.unit = unit;
  d.inputNames = std::move(inputs);
  d.outputNames = {"Y"};
  d.infer = inferSoftmaxLike;
  return d;
}

}  // namespace

void registerKilnAttentionOps(OpRegistry& registry) {
  // Attention's two matrix products dominate: it runs on the Cube unit (softmax on the Vector unit inside it).
  OpDef attention = kilnOp("Attention", 3, 4, ComputeUnit::Cube, {"Q", "K", "V", "Mask"});
  attention.infer = inferAttention;
  registry.add(std::move(attention));
  OpDef softmaxDropout = kilnOp("SoftmaxDropout", 1, 3, ComputeUnit::Vector, {"X", "ratio", "training_mode"});
  softmaxDropout.maxOutputs = 2;
  softmaxDropout.outputNames = {"Y", "mask"};
  registry.add(std::move(softmaxDropout));
  registry.add(kilnOp("BiasSoftmax", 2, 2, ComputeUnit::Vector, {"X", "Bias"}));
}

}  // namespace kiln
