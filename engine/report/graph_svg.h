#pragma once
// The compiled graph as an inline SVG for the batch report's case page: laid out by Graphviz dot (layout/), nodes
// coloured by what the compiler made of them — fused nodes (tooltip: the rule and how many original nodes they
// replaced), layout conversions, Cube / Vector / AI CPU / host ops. Large graphs are drawn as the workbench first
// shows them: grouped (layout/scope_tree: name scopes, repeated blocks, control-flow bodies) with groups closed, so
// the layout stays small. With an overlay (layout/node_overlay, the workbench's "Colour by"), nodes take its colours
// and a legend heads the drawing.
#include <cstddef>
#include <string>

namespace kiln {

class Graph;
namespace layout {
struct Overlay;
}

// `openAllUpTo`: graphs with at most this many nodes (bodies included) are drawn node by node, larger ones by closed
// groups. Throws std::runtime_error when Graphviz fails.
std::string compiledGraphSvg(const Graph& g, size_t openAllUpTo = 250, const layout::Overlay* overlay = nullptr);

}  // namespace kiln
