#pragma once
// What the MatMul rules (MatMulBiasAddFusion, MatMulAddGeluFusion, TransposeMatMulFusion) share: the MatMul + bias
// pattern, the test that a constant is a bias (broadcast along the last axis only), and the kiln:FusedMatMul they
// all produce (contract in ir/opdefs/kiln_fused_ops.cpp).
#include <string>

#include "ir/fused_node.h"
#include "fusion/pattern.h"

namespace kiln {

// MatMul, or a kiln:FusedMatMul that has neither bias nor activation yet (alpha and transposes are kept).
pattern::Op plainMatMul();
// Add(plainMatMul -> "product", constant "bias"), either side; binds "matmul", "add", "product", "bias".
pattern::Op matMulPlusConstant();
// True when `bias` is a floating constant of `product`'s dtype shaped [N] or [1, ..., 1, N], N being product's
// static last dim, and not of higher rank than product: adding it neither broadcasts the product up nor along any
// axis but the last.
bool isLastAxisBias(const Value& bias, const Value& product);
// A kiln:FusedMatMul replacing `matmul` (MatMul or FusedMatMul: its inputs and flags) with `bias` (may be null) and
// `activation`, producing `out`.
FusedNodeSpec fusedMatMulSpec(const Node& matmul, Value* bias, const std::string& activation, Value* out);

}  // namespace kiln
