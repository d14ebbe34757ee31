#include "layout/pass_view.h"

#include <algorithm>
#include <functional>
#include <future>
#include <map>
#include <queue>
#include <unordered_map>
#include <set>
#include <tuple>

#include "history/history_rows.h"
#include "ir/fused_node.h"
#include "layout/node_overlay.h"
#include "ir/graph.h"
#include "util/json.h"

namespace kiln::layout {

namespace {

// What the view reads of a node's annotations: its compute unit and, for a fused node, the first imported node it
// replaced (the smallest id in "fusion.replaced").
struct RowFacts {
  std::string unit;
  int64_t origin = 0;
};
RowFacts factsOf(const NodeRow& r) {
  RowFacts f;
  try {
    const Json j = Json::parse(r.annotationsJson.empty() ? "{}" : r.annotationsJson);
    if (const Json* u = j.find("unit"); u && u->isString()) f.unit = u->asString();
    if (const Json* rep = j.find("fusion.replaced"); rep && rep->isString())
      for (int64_t id : nodeIdList(rep->asString()))
        if (id > 0 && (f.origin == 0 || id < f.origin)) f.origin = id;
  } catch (const std::exception&) {
    // A history written by another tool may hold anything here: no unit or origin rather than a failure.
  }
  return f;
}

// Kahn's algorithm over the union, ties broken by `key` then by position in `nodes` (id order).
std::vector<size_t> topoOrder(const std::vector<PassViewNode>& nodes, const std::vector<NodeEdge>& edges,
                              const std::vector<int64_t>& key) {
  std::unordered_map<int64_t, size_t> index;
  for (size_t i = 0; i < nodes.size(); ++i) index[nodes[i].id] = i;
  std::vector<std::vector<size_t>> out(nodes.size());
  std::vector<int> indeg(nodes.size(), 0);
  for (const auto& e : edges) {
    auto a = index.find(e.from), b = index.find(e.to);
    if (a == index.end() || b == index.end()) continue;
    out[a->second].push_back(b->second);
    ++indeg[b->second];
  }
  using Entry = std::pair<int64_t, size_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> ready;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (!indeg[i]) ready.push({key[i], i});
  std::vector<size_t> order;
  std::vector<bool> done(nodes.size(), false);
  while (order.size() < nodes.size()) {
    if (ready.empty()) {  // a cycle in a damaged history: take the first remaining node and go on
      for (size_t i = 0; i < nodes.size(); ++i)
        if (!done[i]) {
          ready.push({key[i], i});
          indeg[i] = 0;
          break;
        }
    }
    const size_t i = ready.top().second;
    ready.pop();
    if (done[i]) continue;
    done[i] = true;
    order.push_back(i);
    for (size_t j : out[i])
      if (--indeg[j] == 0 && !done[j]) ready.push({key[j], j});
  }
  return order;
}

// Where each node sits in the exporter's order, so a compiled graph is drawn (and its layers found) in the order the
// model was written, not in the order the passes created nodes: an imported node by its id (ids follow the file),
// a fused node by the first node it replaced, a node a pass inserted (TransData, Cast, ...) right after its latest
// producer, or before its first consumer when it has no producer (graph inputs too). `importedMaxId` 0: provenance
// unknown, ids only.
std::vector<int64_t> provenanceKeys(const std::vector<PassViewNode>& nodes, const std::vector<NodeEdge>& edges,
                                    int64_t importedMaxId) {
  std::vector<int64_t> key(nodes.size());
  std::vector<bool> inserted(nodes.size(), false);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const PassViewNode& n = nodes[i];
    key[i] = n.origin > 0 ? n.origin : n.id;
    inserted[i] = n.kind == PassViewNode::Kind::Op && n.origin <= 0 && importedMaxId > 0 && n.id > importedMaxId;
    // A graph input stands right before its first reader: weights exported as inputs and a KV cache's past_N sit
    // with their layer, not hundreds of them above the first node.
    inserted[i] = inserted[i] || n.kind == PassViewNode::Kind::Input;
  }
  if (std::find(inserted.begin(), inserted.end(), true) == inserted.end()) return key;
  std::unordered_map<int64_t, size_t> index;
  for (size_t i = 0; i < nodes.size(); ++i) index[nodes[i].id] = i;
  std::vector<std::vector<size_t>> producers(nodes.size()), consumers(nodes.size());
  for (const auto& e : edges) {
    auto a = index.find(e.from), b = index.find(e.to);
    if (a == index.end() || b == index.end()) continue;
    producers[b->second].push_back(a->second);
    consumers[a->second].push_back(b->second);
  }
  // Inserted nodes in dependency order (a chain of them follows its head); the rest keep their keys.
  const std::vector<size_t> order = topoOrder(nodes, edges, key);
  std::vector<bool> keyed(nodes.size(), true);
  for (size_t i : order) {
    if (!inserted[i]) continue;
    keyed[i] = false;
    for (size_t p : producers[i])
      if (keyed[p] && nodes[p].kind == PassViewNode::Kind::Op && (!keyed[i] || key[p] > key[i])) {
        key[i] = key[p];
        keyed[i] = true;
      }
  }
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const size_t i = *it;
    if (keyed[i]) continue;
    for (size_t c : consumers[i])
      if (keyed[c] && (!keyed[i] || key[c] < key[i])) {
        key[i] = key[c];
        keyed[i] = true;
      }
  }
  return key;
}

void addGraph(const GraphSnapshot& s, std::map<int64_t, PassViewNode>& nodes, std::vector<NodeEdge>& edges,
              std::set<std::tuple<int64_t, int64_t, int64_t>>& seenEdges) {
  // Drawn: the main graph's nodes, and those of bodies of drawn control-flow nodes (not a fused kernel's originals).
  // A body whose owner is not in this snapshot (a damaged history) is left out, as is an ownership cycle.
  std::unordered_map<int64_t, const NodeRow*> rows;
  for (const NodeRow& n : s.nodes) rows[n.id] = &n;
  std::unordered_map<int64_t, bool> drawnMemo;
  std::function<bool(int64_t, int)> drawn = [&](int64_t graphOwner, int depth) -> bool {
    if (graphOwner == 0) return true;
    if (depth > 64) return false;
    if (auto m = drawnMemo.find(graphOwner); m != drawnMemo.end()) return m->second;
    auto o = rows.find(graphOwner);
    const bool yes = o != rows.end() && isControlFlowOp(o->second->domain.empty() ? o->second->opType : o->second->domain + ":" + o->second->opType) &&
                     drawn(o->second->graphOwner, depth + 1);
    return drawnMemo[graphOwner] = yes;
  };
  std::unordered_map<int64_t, const ValueRow*> values;
  for (const ValueRow& v : s.values)
    if (drawn(v.graphOwner, 0)) values[v.id] = &v;
  std::unordered_map<int64_t, bool> isNode;
  for (const NodeRow& n : s.nodes)
    if (drawn(n.graphOwner, 0)) isNode[n.id] = true;
  for (const NodeRow& n : s.nodes) {
    if (nodes.count(n.id) || !isNode.count(n.id)) continue;
    PassViewNode p;
    p.id = n.id;
    p.name = n.name;
    p.opType = n.opType;
    p.domain = n.domain;
    const RowFacts facts = factsOf(n);
    p.unit = facts.unit;
    p.origin = facts.origin;
    if (n.graphOwner != 0) {
      p.owner = n.graphOwner;
      p.body = n.graphAttr;
    }
    nodes.emplace(n.id, std::move(p));
  }
  auto addEdge = [&](int64_t from, int64_t to, int64_t valueId) {
    // One key per (from, to, value): the same edge at both passes is drawn once.
    if (!seenEdges.insert({from, to, valueId}).second) return;
    edges.push_back({from, to, valueId});
  };
  auto addTerminal = [&](int64_t t, PassViewNode::Kind kind, const ValueRow& v) {
    if (nodes.count(t)) return;
    PassViewNode p;
    p.id = t;
    p.kind = kind;
    p.name = v.name;
    p.opType = kind == PassViewNode::Kind::Input ? "input" : "output";
    if (v.graphOwner != 0) {
      p.owner = v.graphOwner;
      p.body = v.graphAttr;
    }
    nodes.emplace(t, std::move(p));
  };
  // Where a value comes from on the canvas: its producer, the terminal of a graph (or body) input, or nothing
  // (a constant).
  auto source = [&](const ValueRow& v) -> int64_t {
    if (v.producerNode) return *v.producerNode;
    if (v.isInput && !v.isConstant) return inputTerminal(v.id);
    return 0;
  };
  for (const auto& [id, v] : values) {
    if (v->isInput && !v->isConstant) addTerminal(inputTerminal(id), PassViewNode::Kind::Input, *v);
    if (v->isOutput) {
      addTerminal(outputTerminal(id), PassViewNode::Kind::Output, *v);
      if (const int64_t from = source(*v)) addEdge(from, outputTerminal(id), id);
      if (v->graphOwner != 0) addEdge(outputTerminal(id), v->graphOwner, id);
    }
  }
  for (const EdgeRow& e : s.edges) {
    auto v = values.find(e.valueId);
    if (v == values.end()) continue;
    const int64_t from = source(*v->second);
    if (from && nodes.count(e.consumerNode)) addEdge(from, e.consumerNode, e.valueId);
  }
}

}  // namespace

int64_t inputTerminal(int64_t valueId) { return -(valueId * 2 + 1); }
int64_t outputTerminal(int64_t valueId) { return -(valueId * 2 + 2); }
int64_t terminalValue(int64_t terminalId) { return (-terminalId - 1) / 2; }

const PassViewNode* PassView::node(int64_t id) const {
  auto it = index.find(id);
  return it == index.end() ? nullptr : &nodes[it->second];
}

namespace {

// The nodes in view order, the counters and the index, once `nodes` and `edges` hold the union.
void finish(PassView& view, std::map<int64_t, PassViewNode>& nodes, std::vector<NodeEdge>& edges) {
  std::vector<PassViewNode> flat;
  flat.reserve(nodes.size());
  for (auto& [id, n] : nodes) flat.push_back(std::move(n));
  // Ties: provenance keys (provenanceKeys), then id order, where terminals (negative ids) come first.
  for (size_t i : topoOrder(flat, edges, provenanceKeys(flat, edges, view.importedMaxId)))
    view.nodes.push_back(flat[i]);
  for (const auto& n : view.nodes) {
    if (n.kind != PassViewNode::Kind::Op) continue;  // a re-pointed graph output is drawn, but it is not a node
    if (n.state != NodeState::Removed) ++(n.owner ? view.bodyOps : view.ops);
    if (n.state == NodeState::Added) ++view.added;
    if (n.state == NodeState::Removed) ++view.removed;
    if (n.state == NodeState::Changed) ++view.changed;
  }
  for (size_t i = 0; i < view.nodes.size(); ++i) view.index[view.nodes[i].id] = i;
  view.edges = std::move(edges);
  view.scopes = std::make_shared<const ScopeTree>(ScopeTree::build(scopeNames(view)));
  if (!view.annotationKeys) view.annotationKeys = std::make_shared<const AnnotationKeys>(findAnnotationKeys(view));
}

}  // namespace

PassView passViewOf(const Graph& g) {
  PassView view;
  view.after = snapshotOf(g);
  std::map<int64_t, PassViewNode> nodes;
  std::vector<NodeEdge> edges;
  std::set<std::tuple<int64_t, int64_t, int64_t>> seen;
  addGraph(view.after, nodes, edges, seen);
  finish(view, nodes, edges);
  return view;
}

PassView buildPassView(const HistoryReader& reader, int64_t runId, int toPass, int fromPass) {
  PassView view;
  view.runId = runId;
  view.toPass = toPass;
  view.fromPass = fromPass;
  view.after = reader.graphAt(runId, toPass);
  view.importedMaxId = reader.importedMaxNodeId(runId);
  // The earlier side (the diff's read, the earlier graph) is worked out on a second thread while this one builds
  // the later side: on a 50k-node pass both take about as long. The reader is used by that thread only meanwhile.
  struct Earlier {
    GraphDiff diff;
    std::map<int64_t, PassViewNode> nodes;
  };
  std::future<Earlier> earlier;
  if (fromPass >= 0)
    earlier = std::async(std::launch::async, [&] {
      Earlier e;
      e.diff = reader.diff(view.after, fromPass);
      view.before = graphBefore(view.after, e.diff);
      std::vector<NodeEdge> ignored;
      std::set<std::tuple<int64_t, int64_t, int64_t>> ignoredSeen;
      addGraph(view.before, e.nodes, ignored, ignoredSeen);
      return e;
    });
  std::map<int64_t, PassViewNode> nodes;
  std::vector<NodeEdge> edges;
  std::set<std::tuple<int64_t, int64_t, int64_t>> seen;
  addGraph(view.after, nodes, edges, seen);
  view.annotationKeys = std::make_shared<const AnnotationKeys>(findAnnotationKeys(view));
  if (fromPass >= 0) {
    Earlier e = earlier.get();
    const GraphDiff& diff = e.diff;
    std::map<int64_t, PassViewNode>& beforeNodes = e.nodes;
    for (auto& [id, n] : nodes)
      if (!beforeNodes.count(id)) n.state = NodeState::Added;
    for (auto& [id, n] : beforeNodes)
      if (!nodes.count(id)) {
        n.state = NodeState::Removed;
        nodes.emplace(id, n);
      }
    addGraph(view.before, nodes, edges, seen);  // ghosts keep their edges
    for (const NodeChange& c : diff.changedNodes) {
      auto it = nodes.find(c.after.id);
      if (it == nodes.end() || it->second.state != NodeState::Unchanged) continue;
      it->second.state = NodeState::Changed;
      it->second.changes = c.fields();
    }
    for (const ValueChange& c : diff.changedValues) {
      if (!c.after.producerNode || !c.typeChanged()) continue;
      auto it = nodes.find(*c.after.producerNode);
      if (it == nodes.end() || it->second.state == NodeState::Added || it->second.state == NodeState::Removed)
        continue;
      it->second.state = NodeState::Changed;
      for (const std::string& f : c.fields())
        if (f == "dtype" || f == "shape" || f == "format") it->second.changes.push_back("output " + f);
    }
  }
  finish(view, nodes, edges);
  return view;
}

std::vector<ScopeTree::NodeName> scopeNames(const PassView& view) {
  std::vector<ScopeTree::NodeName> out;
  out.reserve(view.nodes.size());
  for (const auto& n : view.nodes)
    out.push_back({n.id, n.kind == PassViewNode::Kind::Op ? n.name : std::string(),
                   n.kind == PassViewNode::Kind::Op ? n.opType : std::string(), {}, n.owner, n.body});
  for (const NodeEdge& e : view.edges)
    if (auto it = view.index.find(e.to); it != view.index.end()) out[it->second].inputs.push_back(e.from);
  return out;
}

}  // namespace kiln::layout
