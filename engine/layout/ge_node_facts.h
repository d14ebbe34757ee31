#pragma once
// What a GE op's attributes and the om.* annotations say about it, by name, for the inspector: the framework ops a
// fused op absorbed (_datadump_original_op_names), the GE pass that fused it (pass_name), its kernel and kernel
// library, the engine, stream, block dim, device offsets and workspace, and how many fields Kiln's schema did not
// know (raw.*). Empty for nodes that carry none of them (Kiln's own compile).
#include <string>
#include <vector>

#include "util/json.h"

namespace kiln::layout {

struct NodeFact {
  std::string label;  // "absorbed framework ops", "kernel", ...
  std::string text;
};

// `attrs`, `annotations`: a node's attribute and annotation objects as the history stores them (NodeRow).
std::vector<NodeFact> geNodeFacts(const Json& attrs, const Json& annotations);

}  // namespace kiln::layout
