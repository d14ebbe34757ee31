#pragma once
// The structure ONNX requires of its control-flow ops, checked by ValidityCheck before anything relies on it: If has
// both branches, each producing as many outputs as the node; Loop's body takes (iteration, condition, N carried) and
// gives (condition, N carried, K scanned) for a node with 2 + N inputs and N + K outputs; Scan's body takes and
// gives one value per node input and output. A model that breaks these is invalid ONNX, not something to compile.
#include <string>

namespace kiln {

class Node;

// "" when `n` is not a default-domain If/Loop/Scan or is well formed; else what is wrong, in a user's words.
std::string controlFlowProblem(const Node& n);

}  // namespace kiln
