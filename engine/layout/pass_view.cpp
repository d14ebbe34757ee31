#include "layout/pass_view.h"

#include <algorithm>
#include <deque>
#include <functional>
#include <future>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "history/annotation_changes.h"
#include "history/history_rows.h"
#include "ir/fused_node.h"
#include "ir/graph.h"
#include "layout/node_overlay.h"

namespace kiln::layout {

namespace {

// What the view reads of a node's annotations: its compute unit and, for a fused node, the first imported node it
// replaced (the smallest id in "fusion.replaced"). A history written by another tool may hold anything there: no
// unit or origin rather than a failure.
struct RowFacts {
  std::string unit;
  int64_t origin = 0;
};
RowFacts factsOf(const AnnotationViews& annotations) {
  RowFacts f;
  for (const auto& [k, v] : annotations) {
    if (k == "unit") f.unit = std::string(v);
    if (k == "fusion.replaced")
      for (int64_t id : nodeIdList(std::string(v)))
        if (id > 0 && (f.origin == 0 || id < f.origin)) f.origin = id;
  }
  return f;
}

// The nodes and edges drawn at one pass, or the union of two passes'.
struct EdgeKey {
  int64_t from, to, value;
  bool operator==(const EdgeKey&) const = default;
};
struct EdgeKeyHash {
  size_t operator()(const EdgeKey& k) const {
    const std::hash<int64_t> h;
    return h(k.from) ^ (h(k.to) * 0x9e3779b97f4a7c15ULL) ^ (h(k.value) * 0xc2b2ae3d27d4eb4fULL);
  }
};
struct DrawnGraph {
  std::vector<PassViewNode> nodes;
  std::unordered_map<int64_t, size_t> at;  // node id -> position in nodes
  std::vector<NodeEdge> edges;
  std::unordered_set<EdgeKey, EdgeKeyHash> seenEdges;  // one edge per (from, to, value)

  bool has(int64_t id) const { return at.count(id) != 0; }
  PassViewNode* find(int64_t id) {
    auto it = at.find(id);
    return it == at.end() ? nullptr : &nodes[it->second];
  }
  void addNode(PassViewNode n) {
    if (at.emplace(n.id, nodes.size()).second) nodes.push_back(std::move(n));
  }
  void addEdge(const NodeEdge& e) {
    if (seenEdges.insert({e.from, e.to, e.valueId}).second) edges.push_back(e);
  }
};

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

// Adds what `s` draws to `g`: the main graph's nodes, and those of bodies of drawn control-flow nodes (not a fused
// kernel's originals), with their edges and terminals. A body whose owner is not in this snapshot (a damaged history)
// is left out, as is an ownership cycle. `keys`, when given, collects the annotation keys of every node of `s`.
void addGraph(const GraphSnapshot& s, DrawnGraph& g, AnnotationKeyFinder* keys = nullptr) {
  std::unordered_map<int64_t, bool> drawnMemo;
  std::function<bool(int64_t, int)> drawn = [&](int64_t graphOwner, int depth) -> bool {
    if (graphOwner == 0) return true;
    if (depth > 64) return false;
    if (auto m = drawnMemo.find(graphOwner); m != drawnMemo.end()) return m->second;
    const NodeRow* o = s.node(graphOwner);
    const bool yes = o && isControlFlowOp(o->domain.empty() ? o->opType : o->domain + ":" + o->opType) &&
                     drawn(o->graphOwner, depth + 1);
    return drawnMemo[graphOwner] = yes;
  };
  g.nodes.reserve(g.nodes.size() + s.nodes.size());
  g.at.reserve(g.at.size() + s.nodes.size());
  std::deque<std::string> decoded;
  for (const NodeRow& n : s.nodes) {
    const bool draw = !g.has(n.id) && drawn(n.graphOwner, 0);
    if (!draw && !keys) continue;
    decoded.clear();
    const AnnotationViews annotations = readableAnnotations(n.annotationsJson, decoded);
    if (keys)
      for (const auto& [k, v] : annotations) keys->add(k, v);
    if (!draw) continue;
    PassViewNode p;
    p.id = n.id;
    p.name = n.name;
    p.opType = n.opType;
    p.domain = n.domain;
    RowFacts facts = factsOf(annotations);
    p.unit = std::move(facts.unit);
    p.origin = facts.origin;
    if (n.graphOwner != 0) {
      p.owner = n.graphOwner;
      p.body = n.graphAttr;
    }
    g.addNode(std::move(p));
  }
  auto addTerminal = [&](int64_t t, PassViewNode::Kind kind, const ValueRow& v) {
    if (g.has(t)) return;
    PassViewNode p;
    p.id = t;
    p.kind = kind;
    p.name = v.name;
    p.opType = kind == PassViewNode::Kind::Input ? "input" : "output";
    if (v.graphOwner != 0) {
      p.owner = v.graphOwner;
      p.body = v.graphAttr;
    }
    g.addNode(std::move(p));
  };
  // Where a value comes from on the canvas: its producer, the terminal of a graph (or body) input, or nothing
  // (a constant).
  auto source = [&](const ValueRow& v) -> int64_t {
    if (v.producerNode) return *v.producerNode;
    if (v.isInput && !v.isConstant) return inputTerminal(v.id);
    return 0;
  };
  for (const ValueRow& v : s.values) {
    if (!drawn(v.graphOwner, 0)) continue;
    if (v.isInput && !v.isConstant) addTerminal(inputTerminal(v.id), PassViewNode::Kind::Input, v);
    if (v.isOutput) {
      addTerminal(outputTerminal(v.id), PassViewNode::Kind::Output, v);
      if (const int64_t from = source(v)) g.addEdge({from, outputTerminal(v.id), v.id});
      if (v.graphOwner != 0) g.addEdge({outputTerminal(v.id), v.graphOwner, v.id});
    }
  }
  for (const EdgeRow& e : s.edges) {
    const ValueRow* v = s.value(e.valueId);
    if (!v || !drawn(v->graphOwner, 0)) continue;
    const NodeRow* consumer = s.node(e.consumerNode);
    if (!consumer || !drawn(consumer->graphOwner, 0)) continue;
    if (const int64_t from = source(*v)) g.addEdge({from, e.consumerNode, e.valueId});
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

// Moves what `g` draws into the view in view order, with the index and the scope tree (g.seenEdges stays).
void arrange(PassView& view, DrawnGraph& g) {
  std::vector<PassViewNode> flat = std::move(g.nodes);
  g.nodes.clear();
  g.at.clear();
  std::sort(flat.begin(), flat.end(), [](const PassViewNode& a, const PassViewNode& b) { return a.id < b.id; });
  // Ties: provenance keys (provenanceKeys), then id order, where terminals (negative ids) come first.
  view.nodes.clear();
  view.nodes.reserve(flat.size());
  for (size_t i : topoOrder(flat, g.edges, provenanceKeys(flat, g.edges, view.importedMaxId)))
    view.nodes.push_back(std::move(flat[i]));
  view.index.clear();
  view.index.reserve(view.nodes.size());
  for (size_t i = 0; i < view.nodes.size(); ++i) view.index[view.nodes[i].id] = i;
  view.edges = std::move(g.edges);
  g.edges.clear();
  view.scopes = std::make_shared<const ScopeTree>(ScopeTree::build(scopeNames(view)));
}

void countNodes(PassView& view) {
  for (const auto& n : view.nodes) {
    if (n.kind != PassViewNode::Kind::Op) continue;  // a re-pointed graph output is drawn, but it is not a node
    if (n.state != NodeState::Removed) ++(n.owner ? view.bodyOps : view.ops);
    if (n.state == NodeState::Added) ++view.added;
    if (n.state == NodeState::Removed) ++view.removed;
    if (n.state == NodeState::Changed) ++view.changed;
  }
}

// Adds the earlier pass's side to a view arranged from the later graph: states, ghosts of removed nodes with their
// edges (arranged again only when there are any), what changed.
void mergeEarlier(PassView& view, DrawnGraph& later, DrawnGraph& earlier, const GraphDiff& diff) {
  for (PassViewNode& n : view.nodes)
    if (!earlier.has(n.id)) n.state = NodeState::Added;
  DrawnGraph all;
  for (PassViewNode& n : earlier.nodes)
    if (!view.index.count(n.id)) {
      n.state = NodeState::Removed;
      all.nodes.push_back(std::move(n));
    }
  for (const NodeEdge& e : earlier.edges)  // ghosts keep their edges; so does a rewired input
    if (later.seenEdges.insert({e.from, e.to, e.valueId}).second) all.edges.push_back(e);
  if (!all.nodes.empty() || !all.edges.empty()) {
    all.nodes.insert(all.nodes.end(), std::make_move_iterator(view.nodes.begin()),
                     std::make_move_iterator(view.nodes.end()));
    all.edges.insert(all.edges.begin(), view.edges.begin(), view.edges.end());
    arrange(view, all);
  }
  auto find = [&](int64_t id) -> PassViewNode* {
    auto it = view.index.find(id);
    return it == view.index.end() ? nullptr : &view.nodes[it->second];
  };
  for (const NodeChange& c : diff.changedNodes) {
    PassViewNode* n = find(c.after.id);
    if (!n || n->state != NodeState::Unchanged) continue;
    n->state = NodeState::Changed;
    n->changes = c.fields();
  }
  for (const ValueChange& c : diff.changedValues) {
    if (!c.after.producerNode || !c.typeChanged()) continue;
    PassViewNode* n = find(*c.after.producerNode);
    if (!n || n->state == NodeState::Added || n->state == NodeState::Removed) continue;
    n->state = NodeState::Changed;
    for (const std::string& f : c.fields())
      if (f == "dtype" || f == "shape" || f == "format") n->changes.push_back("output " + f);
  }
}

}  // namespace

PassView passViewOf(const Graph& g) {
  PassView view;
  view.after = snapshotOf(g);
  DrawnGraph drawn;
  AnnotationKeyFinder keys;
  addGraph(view.after, drawn, &keys);
  view.annotationKeys = std::make_shared<const AnnotationKeys>(keys.keys());
  arrange(view, drawn);
  countNodes(view);
  return view;
}

PassView buildPassView(const HistoryReader& reader, int64_t runId, int toPass, int fromPass) {
  PassView view;
  view.runId = runId;
  view.toPass = toPass;
  view.fromPass = fromPass;
  view.after = reader.graphAt(runId, toPass);
  view.importedMaxId = reader.importedMaxNodeId(runId);
  // The earlier side (the diff's read, the earlier graph) is worked out on a second thread while this one draws,
  // orders and groups the later graph, which is the whole view when the pass removed no node and rewired no input
  // (an annotating pass). The reader is used by that thread only meanwhile.
  struct Earlier {
    GraphDiff diff;
    DrawnGraph drawn;
  };
  std::future<Earlier> earlier;
  if (fromPass >= 0)
    earlier = std::async(std::launch::async, [&] {
      Earlier e;
      e.diff = reader.diff(view.after, fromPass);
      view.before = graphBefore(view.after, e.diff);
      addGraph(view.before, e.drawn);
      return e;
    });
  DrawnGraph later;
  AnnotationKeyFinder keys;
  addGraph(view.after, later, &keys);
  view.annotationKeys = std::make_shared<const AnnotationKeys>(keys.keys());
  arrange(view, later);
  if (fromPass >= 0) {
    Earlier e = earlier.get();
    mergeEarlier(view, later, e.drawn, e.diff);
  }
  countNodes(view);
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
