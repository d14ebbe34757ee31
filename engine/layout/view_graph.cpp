#include "layout/view_graph.h"

#include <map>

namespace kiln::layout {

int ViewGraph::itemOf(int64_t nodeId) const {
  auto it = itemOfNode.find(nodeId);
  return it == itemOfNode.end() ? -1 : it->second;
}

namespace {

void collect(const ScopeTree& tree, int g, int cluster, const std::set<int>& open, ViewGraph& vg) {
  for (const auto& it : tree.group(g).items) {
    if (!it.isGroup) {
      vg.itemOfNode[it.id] = static_cast<int>(vg.items.size());
      vg.items.push_back({ViewItem::Kind::Node, it.id, cluster});
      continue;
    }
    const int child = static_cast<int>(it.id);
    if (open.count(child)) {
      vg.clusters.push_back(child);
      vg.clusterParent.push_back(cluster);
      collect(tree, child, child, open, vg);
    } else {
      const int index = static_cast<int>(vg.items.size());
      vg.items.push_back({ViewItem::Kind::Group, child, cluster});
      // Every node inside the closed group is shown by it.
      std::vector<int> stack{child};
      while (!stack.empty()) {
        const int x = stack.back();
        stack.pop_back();
        for (const auto& inner : tree.group(x).items) {
          if (inner.isGroup) stack.push_back(static_cast<int>(inner.id));
          else vg.itemOfNode[inner.id] = index;
        }
      }
    }
  }
}

}  // namespace

ViewGraph buildViewGraph(const ScopeTree& tree, const std::vector<NodeEdge>& edges, const std::set<int>& open) {
  ViewGraph vg;
  collect(tree, 0, 0, open, vg);
  std::map<std::pair<size_t, size_t>, size_t> merged;
  for (const NodeEdge& e : edges) {
    const int a = vg.itemOf(e.from), b = vg.itemOf(e.to);
    if (a < 0 || b < 0 || a == b) continue;  // inside one closed group: not drawn
    const auto key = std::make_pair(static_cast<size_t>(a), static_cast<size_t>(b));
    auto it = merged.find(key);
    if (it != merged.end()) {
      ++vg.edges[it->second].count;
      continue;
    }
    merged.emplace(key, vg.edges.size());
    vg.edges.push_back({key.first, key.second, e.valueId, 1});
  }
  return vg;
}

}  // namespace kiln::layout
