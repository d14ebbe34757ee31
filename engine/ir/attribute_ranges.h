#pragma once
// Attributes that ONNX defines as positive everywhere they occur: strides, dilations, kernel_shape, blocksize,
// group (Conv, pooling, ConvTranspose, DepthToSpace, SpaceToDepth, Col2Im, ...). A zero there is a division by
// zero in libonnx's shape inference (SIGFPE, found by fuzzing) and in kernels, so such a node is refused at load
// and never handed to inference.
#include <cstdint>
#include <string>
#include <string_view>

namespace kiln {

class Node;

// Whether ONNX requires every value of attribute `name` to be at least 1.
bool attributeMustBePositive(std::string_view name);
// The message for such an attribute holding `value`.
std::string nonPositiveAttributeMessage(std::string_view name, int64_t value);

// "attribute 'strides' holds 0; it must be at least 1" for the first such attribute of `n`, empty when all are fine.
std::string attributeRangeProblem(const Node& n);

}  // namespace kiln
