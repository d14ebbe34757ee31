#pragma once
// The compiled graph as an inline SVG for the batch report's case page: laid out by Graphviz dot (layout/), nodes
// coloured by what the compiler made of them — fused nodes (tooltip: the rule and how many original nodes they
// replaced), layout conversions, Cube / Vector / AI CPU / host ops. Large graphs are drawn as the workbench first
// shows them: grouped by name scope (layout/scope_tree) with groups closed, so the layout stays small.
#include <cstddef>
#include <string>

namespace kiln {

class Graph;

// `openAllUpTo`: graphs with at most this many nodes are drawn node by node, larger ones by closed scope groups.
// Throws std::runtime_error when Graphviz fails.
std::string compiledGraphSvg(const Graph& g, size_t openAllUpTo = 250);

}  // namespace kiln
