#include "ir/aliasing_ops.h"

#include <algorithm>
#include <iterator>

#include "ir/graph.h"

namespace kiln {

// No kernel writes such an output, so it shares the input's block.
bool aliasesInput(const Node& n) {
  // GE runs the same relabelling ops (and ExpandDims, its Unsqueeze) without a task, on their input's memory: an
  // .om's graph keeps them under the ge domain.
  static const char* const kTypes[] = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "ExpandDims"};
  if ((!n.domain().empty() && n.domain() != "ge") || n.numInputs() < 1 || !n.input(0) || n.numOutputs() != 1 ||
      !n.output(0))
    return false;
  if (n.domain().empty() && n.opType() == "ExpandDims") return false;
  return std::find(std::begin(kTypes), std::end(kTypes), n.opType()) != std::end(kTypes);
}

}  // namespace kiln
