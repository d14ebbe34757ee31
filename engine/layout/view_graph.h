#pragma once
// What the canvas shows for one set of open groups: the visible items (nodes, and closed groups standing for all
// their nodes), open groups as clusters around their items, and edges between visible items — an edge into a
// closed group is drawn to the group, parallel edges are merged and counted. Pure data: dot_layout places it.
#include <cstdint>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "layout/scope_tree.h"

namespace kiln::layout {

struct ViewItem {
  enum class Kind { Node, Group } kind = Kind::Node;
  int64_t id = 0;   // node id, or group index in the ScopeTree
  int cluster = 0;  // the open group it is drawn inside (0 = root, no cluster)
  std::string key() const { return (kind == Kind::Node ? "n" : "g") + std::to_string(id); }
};

struct ViewEdge {
  size_t from = 0, to = 0;  // indices into ViewGraph::items
  int64_t valueId = 0;      // the first value carried (for tooltips); count says how many were merged
  int count = 1;
};

struct ViewGraph {
  std::vector<ViewItem> items;
  std::vector<ViewEdge> edges;
  std::vector<int> clusters;       // open groups (not the root), parents before children
  std::vector<int> clusterParent;  // per cluster: the open group it is drawn inside (0 = root)
  // Index of the item showing this node (the node itself or the closed group holding it); -1 when unknown.
  int itemOf(int64_t nodeId) const;
  std::unordered_map<int64_t, int> itemOfNode;
};

struct NodeEdge {
  int64_t from, to, valueId;  // producer node id -> consumer node id
};

// `open`: groups the user opened. A group is visible when all its ancestors are open; it shows as one item when
// closed and as a cluster when open. The root is always open.
ViewGraph buildViewGraph(const ScopeTree& tree, const std::vector<NodeEdge>& edges, const std::set<int>& open);

}  // namespace kiln::layout
