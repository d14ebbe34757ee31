#include "layout/scope_tree.h"

#include <map>

namespace kiln::layout {

std::vector<std::string> scopeOf(const std::string& nodeName) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= nodeName.size()) {
    const size_t slash = nodeName.find('/', start);
    if (slash == std::string::npos) break;  // the last component is the node's own name
    if (slash > start) parts.push_back(nodeName.substr(start, slash - start));
    start = slash + 1;
  }
  return parts;
}

namespace {

// Merges single-child chains under `g` (recursively) and wraps long runs of loose nodes into chunks.
void tidy(std::vector<ScopeGroup>& gs, int g, size_t maxItems) {
  // Merge: while g (not the root) holds exactly one item and it is a group, absorb that group's items.
  while (g != 0 && gs[g].items.size() == 1 && gs[g].items[0].isGroup && !gs[gs[g].items[0].id].chunk) {
    const int child = static_cast<int>(gs[g].items[0].id);
    gs[g].path = gs[child].path;
    gs[g].label += "/" + gs[child].label;
    gs[g].items = std::move(gs[child].items);
    for (const auto& it : gs[g].items)
      if (it.isGroup) gs[it.id].parent = g;
    gs[child].items.clear();
    gs[child].parent = -2;  // dropped; removed by the caller's compaction
  }
  for (const auto& it : std::vector<ScopeGroup::Item>(gs[g].items))
    if (it.isGroup) tidy(gs, static_cast<int>(it.id), maxItems);
  // A group of one node says nothing the node does not: show the node in its place.
  for (auto& it : gs[g].items) {
    if (!it.isGroup) continue;
    ScopeGroup& child = gs[it.id];
    if (child.items.size() == 1 && !child.items[0].isGroup) {
      const int64_t node = child.items[0].id;
      child.items.clear();
      child.parent = -2;
      it = {false, node};
    }
  }
  if (gs[g].items.size() <= maxItems) return;
  // Wrap runs of consecutive nodes into chunks of up to maxItems/2 nodes, keeping graph order.
  const size_t chunkSize = std::max<size_t>(2, maxItems / 2);
  std::vector<ScopeGroup::Item> out;
  std::vector<int64_t> run;
  int64_t counted = 0;
  auto flush = [&] {
    for (size_t i = 0; i < run.size(); i += chunkSize) {
      const size_t n = std::min(chunkSize, run.size() - i);
      if (n < 4) {  // a handful of nodes is clearer loose than as a chunk
        for (size_t k = 0; k < n; ++k) out.push_back({false, run[i + k]});
        counted += static_cast<int64_t>(n);
        continue;
      }
      ScopeGroup c;
      c.path = gs[g].path + (gs[g].path.empty() ? "" : "/") + "#" + std::to_string(counted + 1);
      c.label = "nodes " + std::to_string(counted + 1) + "–" + std::to_string(counted + static_cast<int64_t>(n));
      c.parent = g;
      c.chunk = true;
      c.totalNodes = static_cast<int64_t>(n);
      for (size_t k = 0; k < n; ++k) c.items.push_back({false, run[i + k]});
      counted += static_cast<int64_t>(n);
      gs.push_back(std::move(c));
      out.push_back({true, static_cast<int64_t>(gs.size() - 1)});
    }
    run.clear();
  };
  const std::vector<ScopeGroup::Item> items = gs[g].items;  // flush() grows gs: no references into it
  for (const auto& it : items) {
    if (it.isGroup) {
      flush();
      out.push_back(it);
      counted += gs[it.id].totalNodes;
    } else {
      run.push_back(it.id);
    }
  }
  flush();
  gs[g].items = std::move(out);
}

}  // namespace

ScopeTree ScopeTree::build(const std::vector<NodeName>& nodes, size_t maxItems) {
  std::vector<ScopeGroup> gs(1);
  std::vector<std::map<std::string, int>> childByName(1);
  for (const auto& n : nodes) {
    int g = 0;
    for (const std::string& part : scopeOf(n.name)) {
      auto it = childByName[g].find(part);
      if (it == childByName[g].end()) {
        ScopeGroup c;
        c.path = gs[g].path.empty() ? part : gs[g].path + "/" + part;
        c.label = part;
        c.parent = g;
        gs.push_back(std::move(c));
        childByName.emplace_back();
        const int idx = static_cast<int>(gs.size() - 1);
        gs[g].items.push_back({true, idx});
        it = childByName[g].emplace(part, idx).first;
      }
      g = it->second;
    }
    gs[g].items.push_back({false, n.id});
    for (int a = g; a >= 0; a = gs[a].parent) ++gs[a].totalNodes;
  }
  tidy(gs, 0, maxItems);
  // Compact away merged-out groups, renumbering references.
  std::vector<int> remap(gs.size(), -1);
  ScopeTree t;
  for (size_t i = 0; i < gs.size(); ++i)
    if (gs[i].parent != -2) {
      remap[i] = static_cast<int>(t.groups_.size());
      t.groups_.push_back(std::move(gs[i]));
    }
  for (auto& g : t.groups_) {
    if (g.parent >= 0) g.parent = remap[g.parent];
    for (auto& it : g.items)
      if (it.isGroup) it.id = remap[it.id];
  }
  for (size_t gi = 0; gi < t.groups_.size(); ++gi)
    for (const auto& it : t.groups_[gi].items)
      if (!it.isGroup) t.nodeGroup_[it.id] = static_cast<int>(gi);
  return t;
}

int ScopeTree::groupOf(int64_t nodeId) const {
  auto it = nodeGroup_.find(nodeId);
  return it == nodeGroup_.end() ? -1 : it->second;
}

std::vector<int> ScopeTree::ancestry(int g) const {
  std::vector<int> chain;
  for (int a = g; a > 0; a = groups_[a].parent) chain.insert(chain.begin(), a);
  return chain;
}

bool ScopeTree::within(int g, int ancestor) const {
  for (int a = g; a >= 0; a = groups_[a].parent)
    if (a == ancestor) return true;
  return false;
}

}  // namespace kiln::layout
