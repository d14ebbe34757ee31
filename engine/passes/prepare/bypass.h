#pragma once
// Shared by the passes that remove a node whose output equals one of its inputs (NoOpRemoval,
// AlgebraicSimplification): every use of `out` takes `in`, and the node goes.
namespace kiln {

class Node;
class Value;

// Returns false (and changes nothing) when the rewrite would change the model's interface: `out` is a graph
// output and `in` cannot take over its name (it is a graph input, an initializer or itself a graph output).
bool bypassNode(Node& node, Value* in, Value* out);

}  // namespace kiln
