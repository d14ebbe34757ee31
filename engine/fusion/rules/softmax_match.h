#pragma once
// What the softmax-based rules (AttentionFusion, SoftmaxDropoutFusion, BiasSoftmaxFusion) check alike.
#include <cstdint>
#include <optional>

namespace kiln {

struct Dim;
class Node;
class Value;

// The first axis (non-negative) of the trailing block a default-domain Softmax normalises over, each row being one
// index of the leading dims. Before opset 13 the input is flattened to 2-D at `axis` (default 1), so any axis
// gives rows; from opset 13 `axis` (default -1) is one axis, which is a row-wise softmax only when it is the last.
// Nullopt otherwise, or when the rank is unknown or the axis invalid.
std::optional<int64_t> softmaxRowAxis(const Node& softmax, int64_t opset);
// True when the Softmax normalises over exactly the last axis of its input.
bool softmaxOverLastAxis(const Node& softmax, int64_t opset);

// True when two dimensions are provably equal: the same static extent or the same symbol (unknown never is).
bool provablySameDim(const Dim& a, const Dim& b);

// The value of a single-element floating-point constant (not an overridable graph input), if finite.
std::optional<double> floatScalarConstant(const Value* v);

}  // namespace kiln
