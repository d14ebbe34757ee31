#pragma once
// Type and shape inference for the ai.onnx op versions of opsets 18 to 23 that libonnx 1.12 does not know, one
// function per family; onnx_newer_ops.cpp binds them to (op, version). Data-dependent inputs (axes, pads, sizes,
// scales, split, shape) are read when they are constants; otherwise the rank is kept where it is known and the
// extents they decide are left unknown. A malformed node throws std::runtime_error with the reason.
#include <string>

namespace kiln {

class Node;

namespace newer_onnx {

void sameAsInput(Node& n);           // Y has X's type (activations, normalisations, Scatter*, RotaryEmbedding)
void boolOfInput(Node& n);           // IsInf, IsNaN, RegexFullMatch: bool of X's shape
void broadcastBinary(Node& n);       // Bitwise{And,Or,Xor}, StringConcat
void reduce(Node& n);                // Reduce*-18/20: axes as input 1, keepdims, noop_with_empty_axes
void split(Node& n);                 // Split-18: split input or num_outputs
void pad(Node& n);                   // Pad-18..23: pads, constant_value, axes inputs
void resize(Node& n);                // Resize-18/19: axes, keep_aspect_ratio_policy
void pool(Node& n);                  // AveragePool-19, LpPool-18: dilations, ceil_mode
void deformConv(Node& n);            // DeformConv-19
void attention(Node& n);             // Attention-23
void affineGrid(Node& n);            // AffineGrid-20
void col2Im(Node& n);                // Col2Im-18
void centerCropPad(Node& n);         // CenterCropPad-18
void dft(Node& n);                   // DFT-20 (dft_length and axis as inputs)
void gridSample(Node& n);            // GridSample-20 (rank N)
void cast(Node& n);                  // Cast-19/21/23 (`to`, saturate)
void castLike(Node& n);              // CastLike-19/21/23
void quantizeLinear(Node& n);        // QuantizeLinear-19/21/23 (output_dtype, block_size)
void dequantizeLinear(Node& n);      // DequantizeLinear-19/21/23 (block_size, output_dtype)
void constantOfShape(Node& n);       // ConstantOfShape-20/21/23
void optionalHasElement(Node& n);    // OptionalHasElement-18
void optionalGetElement(Node& n);    // OptionalGetElement-18
void stringSplit(Node& n);           // StringSplit-20
void imageDecoder(Node& n);          // ImageDecoder-20
void bitCast(Node& n);               // BitCast-26: `to` of the input's bit width, same shape

}  // namespace newer_onnx

// QuantizeLinear / DequantizeLinear with block_size: "" when the scale's shape fits x's (ceil(D / block_size) along
// axis, x's extents elsewhere), else the problem. ValidityCheck refuses such a node as invalid.
std::string blockedScaleProblem(const Node& n);

}  // namespace kiln
