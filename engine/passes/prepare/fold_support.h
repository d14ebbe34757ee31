#pragma once
// Small pieces the folding passes share (ConstantFolding, DimensionCompute, BatchNormFold): what counts as a
// constant, turning a node's output into an initializer, dropping initializers a rewrite left unused, and reading
// an option that an older option schema may not know yet.
#include <cstdint>
#include <string>

#include "ir/tensor.h"

namespace kiln {

class Graph;
class Node;
class NodeWorklist;
class Options;
class Value;

// The data of a value that is a compile-time constant: an initializer that is not also a graph input (an ONNX
// graph input with an initializer is only a default the caller may override). Null otherwise.
const Tensor* constantData(const Value* v);

// Replaces every use of `out` (a node output) by a new initializer holding `data`, named after `out`, and reports
// the consumers to `work`. The producing node must be erased afterwards (the name is unique again once it is gone).
Value* replaceWithInitializer(Value* out, Tensor data, NodeWorklist& work);

// Erases `v` when it is an initializer nobody uses any more (and not a graph input or output).
void eraseIfDeadInitializer(Value* v);

// The option's value, or `fallback` when the option schema does not define the key.
int64_t optionInt(const Options& options, const std::string& key, int64_t fallback);
bool optionBool(const Options& options, const std::string& key, bool fallback);

// True for nodes in the default ONNX domain ("" or "ai.onnx").
bool isOnnxDomain(const Node& n);

}  // namespace kiln
