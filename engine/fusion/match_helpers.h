#pragma once
// Small predicates that hand-written fusion rules share.
#include <string_view>

namespace kiln {

class Node;
class Value;

// The producer of `v` when it is an op of `qualifiedType`, else null.
Node* producerOfType(const Value* v, std::string_view qualifiedType);
// True when `v` is read by exactly one node input (and is not a graph output): fusing its producer away is safe.
bool hasSingleUse(const Value* v);
// Constants: see passes/constant_value.h (constantValueOf, isConstantFilledWith).

}  // namespace kiln
