#pragma once
// After a fusion, the values the removed nodes read besides the fused node's inputs (Reshape targets, scale
// constants, shape arithmetic computing them) may have no reader left. Erasing them keeps the graph free of
// orphans without waiting for a later dead-code pass.
#include <vector>

namespace kiln {

class Value;

// Erases each value that is now unused: a dead initializer, or the output of a node (without subgraphs) whose
// outputs are all unused, recursively up through that node's inputs. Graph inputs and outputs are never touched.
void eraseDeadInputs(const std::vector<Value*>& values);

}  // namespace kiln
