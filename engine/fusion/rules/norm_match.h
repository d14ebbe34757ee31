#pragma once
// What the normalisation rules (LayerNormFusion, RmsNormFusion) match alike: a ReduceMean over trailing axes, the
// other input of a binary op, and constants shaped like the normalised dims.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fusion/match_helpers.h"

namespace kiln {

class Node;
class Value;
class Shape;

// The first normalised axis (non-negative) when `reduce` is a keepdims ReduceMean over the trailing axes of a
// rank-`rank` input (axes from the attribute, or from a constant input at opset 18), else nullopt.
std::optional<int64_t> trailingReduceAxis(const Node& reduce, int64_t rank);
// The input of the two-input `node` that is not `v`; null when `v` is not one of its inputs.
Value* otherBinaryInput(const Node& node, const Value* v);
// The static extents of dims [axis, rank) of `shape`; nullopt when any is not static.
std::optional<std::vector<int64_t>> trailingDims(const Shape& shape, int64_t axis);
// True when `p` is a constant with exactly the normalised dims (leading 1s allowed) or a single element.
bool fitsNormalisedDims(const Value* p, const std::vector<int64_t>& normDims);

// Add(ReduceMean(Pow(s, 2) | Mul(s, s)), eps) producing `v`, every intermediate read once: the mean of squares
// both norms take the root of. Without the Add (an epsilon of 0 simplified away) addEps is null, epsilon 0.
struct MeanSquare {
  Node *square = nullptr, *mean = nullptr, *addEps = nullptr;
  // The matched nodes, square first (no null addEps).
  std::vector<Node*> nodes() const;
  Value* squared = nullptr;  // s
  float epsilon = 0;
};
std::optional<MeanSquare> matchMeanSquarePlusEps(const Value* v);

// The affine tail: when `out` is read only by a `opType` ("Mul" for gamma, "Add" for beta) whose other input fits
// the normalised dims, appends that node to `group`, moves `out` to its output and returns the parameter.
Value* absorbParameter(Value*& out, std::vector<Node*>& group, const char* opType,
                       const std::vector<int64_t>& normDims);

// Replaces `group` by kiln:`opType`(x, params...) with attributes axis and epsilon; trailing null params dropped.
Node* fuseNorm(const std::string& opType, const std::vector<Node*>& group, std::vector<Value*> inputs, Value* out,
               int64_t axis, float epsilon, const std::string& rule);

}  // namespace kiln
