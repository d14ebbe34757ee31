#pragma once
// The structure `kiln inspect` reports and scripts read: the groups the workbench draws (layout/scope_tree — name
// scopes, repeated blocks found in the graph, chunks in graph order, control-flow bodies), as JSON (`groups`: name,
// kind scope|repeat|chunk|body, nodes, instances, children) and as an indented outline.
#include <string>
#include <vector>

#include "layout/scope_tree.h"
#include "util/json.h"

namespace kiln {

class Graph;

// Every node for the scope tree: the main graph's in topological order (file order when it has a cycle), then each
// control-flow body's, recursively, with its owner and attribute.
std::vector<layout::ScopeTree::NodeName> structureNames(const Graph& g);
// Those nodes, grouped.
layout::ScopeTree modelStructure(const Graph& g);
// The root's groups, nested; loose nodes are counted, not listed.
Json structureToJson(const layout::ScopeTree& tree);
// "layer 1 · Attention + MLP, 187 nodes  (repeat, 1 of 12)" lines indented by depth, at most `maxDepth` levels;
// runs of sibling instances of one repeat past the first few are folded into one line.
std::string structureOutline(const layout::ScopeTree& tree, int maxDepth = 3);

}  // namespace kiln
