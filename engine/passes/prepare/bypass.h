#pragma once
// Shared by the passes that remove a node whose output equals one of its inputs (NoOpRemoval,
// AlgebraicSimplification): every use of `out` takes `in`, and the node goes.
namespace kiln {

class Node;
class Value;

// Returns false (and changes nothing) when the rewrite would change the model's interface: `out` is a graph
// output and `in` cannot take over its name (it is a graph input, an initializer or itself a graph output); or
// would lose a known element type (losesElementType).
bool bypassNode(Node& node, Value* in, Value* out);

// True when reading `in` where `out` was read would lose what is known of the element type: an export may type an
// op's output (value_info) while its input, from an op nobody can infer (ATen, a custom domain), has none; skipping
// the typed op would leave an untyped value beside typed ones, which the verifier rightly refuses.
bool losesElementType(const Value* in, const Value* out);

}  // namespace kiln
