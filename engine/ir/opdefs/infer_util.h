#pragma once
// Pieces the hand-written inference functions share (Kiln's own ops, plugin ops, and the ai.onnx versions newer
// than libonnx knows): numpy broadcasting over possibly symbolic dims, the output extent of a sliding window, and
// the constant data behind an input (an initializer or a Constant node), for inputs such as axes, pads and sizes.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/shape.h"

namespace kiln {

class Node;
class Tensor;
class Value;

// numpy broadcast of two dims / shapes: equal dims, or 1 against anything; unknown where it cannot be told
// statically. Throws std::runtime_error when two static dims differ and neither is 1.
Dim broadcastDim(const Dim& a, const Dim& b);
Shape broadcastShapes(const Shape& a, const Shape& b);

// Throws "<Op> needs input i" / "<Op> needs an output" unless the first `inputs` inputs and output 0 are present.
void requireIO(const Node& n, size_t inputs);

// The data of an initializer or of a Constant node's `value`; null for anything computed.
const Tensor* knownConstant(const Value* v);
// Input i's constant data as integers; nullopt when the input is absent, computed or not integral.
std::optional<std::vector<int64_t>> constantInts(const Node& n, size_t i);
std::optional<std::vector<double>> constantReals(const Node& n, size_t i);

// A sliding window's output extent along one axis (Conv, pools, DeformConv): floor or ceil of
// (D + pads - dilation·(k - 1) - 1) / stride + 1, or ceil(D / stride) for SAME_*; ceil mode drops a last window that
// would start in the end padding, as ONNX Runtime does. Unknown when D is not static.
Dim windowExtent(const Dim& d, int64_t kernel, int64_t stride, int64_t dilation, int64_t padBegin, int64_t padEnd,
                 const std::string& autoPad, bool ceilMode);

// Normalises a possibly negative axis into [0, rank); throws naming `what` when it is out of range.
int64_t normalizedAxis(int64_t axis, size_t rank, const std::string& what);

}  // namespace kiln
