#include "schedule/topo_order.h"

#include <algorithm>
#include <deque>

#include "ir/graph.h"
#include "util/flat_ptr_map.h"

namespace kiln {

std::string_view topoModeName(TopoMode m) {
  switch (m) {
    case TopoMode::BFS: return "BFS";
    case TopoMode::DFS: return "DFS";
    case TopoMode::RDFS: return "RDFS";
    case TopoMode::StableRDFS: return "StableRDFS";
  }
  return "DFS";
}

namespace {

// Dependencies as dense indices over a valid base order (the graph's own stable topological order).
struct DepGraph {
  std::vector<Node*> nodes;
  std::vector<std::vector<size_t>> preds, succs;
};

DepGraph dependencies(const Graph& g, std::vector<Node*> base) {
  DepGraph d;
  d.nodes = std::move(base);
  FlatPtrMap<const Node*, size_t> index;
  index.reserve(d.nodes.size());
  for (size_t i = 0; i < d.nodes.size(); ++i) index.emplace(d.nodes[i], i);
  d.preds.resize(d.nodes.size());
  d.succs.resize(d.nodes.size());
  for (size_t i = 0; i < d.nodes.size(); ++i)
    for (Node* p : g.predecessorsOf(*d.nodes[i])) {
      const size_t j = index.at(p);
      d.preds[i].push_back(j);
      d.succs[j].push_back(i);
    }
  return d;
}

// Kahn's algorithm; `lifo` takes the most recently readied node next (DFS), otherwise the oldest (BFS).
std::vector<Node*> kahn(const DepGraph& d, bool lifo) {
  std::vector<size_t> pending(d.nodes.size());
  std::deque<size_t> ready;
  for (size_t i = 0; i < d.nodes.size(); ++i)
    if ((pending[i] = d.preds[i].size()) == 0) ready.push_back(i);
  if (lifo) std::reverse(ready.begin(), ready.end());  // the first source on top: DFS starts where the graph does
  std::vector<Node*> order;
  order.reserve(d.nodes.size());
  std::vector<size_t> readied;
  while (!ready.empty()) {
    size_t i;
    if (lifo) {
      i = ready.back();
      ready.pop_back();
    } else {
      i = ready.front();
      ready.pop_front();
    }
    order.push_back(d.nodes[i]);
    readied.clear();
    for (size_t s : d.succs[i])
      if (--pending[s] == 0) readied.push_back(s);
    // For DFS the first consumer should run first: push in reverse so it ends on top of the stack.
    if (lifo)
      ready.insert(ready.end(), readied.rbegin(), readied.rend());
    else
      ready.insert(ready.end(), readied.begin(), readied.end());
  }
  return order;
}

// Post-order walk over predecessors from the roots (iterative: graphs are deep). `reversed` visits the last root and
// the last predecessor first.
std::vector<Node*> reverseDfs(const DepGraph& d, const std::vector<size_t>& roots, bool reversed) {
  std::vector<char> state(d.nodes.size(), 0);  // 0 new, 1 on stack, 2 emitted
  std::vector<Node*> order;
  order.reserve(d.nodes.size());
  std::vector<std::pair<size_t, size_t>> stack;  // (node, next predecessor slot)
  auto visit = [&](size_t root) {
    if (state[root]) return;
    stack.push_back({root, 0});
    state[root] = 1;
    while (!stack.empty()) {
      auto& [i, slot] = stack.back();
      const auto& preds = d.preds[i];
      if (slot < preds.size()) {
        const size_t p = reversed ? preds[preds.size() - 1 - slot] : preds[slot];
        ++slot;
        if (!state[p]) {
          state[p] = 1;
          stack.push_back({p, 0});
        }
        continue;
      }
      state[i] = 2;
      order.push_back(d.nodes[i]);
      stack.pop_back();
    }
  };
  if (reversed)
    for (auto it = roots.rbegin(); it != roots.rend(); ++it) visit(*it);
  else
    for (size_t r : roots) visit(r);
  // What no root reaches, in base order (each visit emits its predecessors first, so the order stays valid).
  for (size_t i = 0; i < d.nodes.size(); ++i) visit(i);
  return order;
}

}  // namespace

std::optional<std::vector<Node*>> topoOrder(const Graph& g, TopoMode mode) {
  auto base = g.topologicalOrder();
  if (!base) return std::nullopt;
  const DepGraph d = dependencies(g, std::move(*base));
  if (mode == TopoMode::BFS || mode == TopoMode::DFS) return kahn(d, mode == TopoMode::DFS);
  // Roots: producers of the graph outputs, in output order.
  FlatPtrMap<const Node*, size_t> index;
  for (size_t i = 0; i < d.nodes.size(); ++i) index.emplace(d.nodes[i], i);
  std::vector<size_t> roots;
  for (const Value* out : g.outputs())
    if (out && out->producer() && out->producer()->graph() == &g) roots.push_back(index.at(out->producer()));
  return reverseDfs(d, roots, mode == TopoMode::RDFS);
}

}  // namespace kiln
