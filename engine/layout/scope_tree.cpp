#include "layout/scope_tree.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "layout/repeat_blocks.h"

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

bool isControlFlowOp(const std::string& qualifiedType) {
  if (qualifiedType == "If" || qualifiedType == "Loop" || qualifiedType == "Scan" || qualifiedType == "SequenceMap")
    return true;
  // GE's: calls and control flow whose bodies are graphs of the model (a GE graph dump, an .om). A fused op Kiln
  // wrote into an .om holds its originals as a body too, but under its own op type: that body is not drawn here.
  static const char* const ge[] = {"ge:PartitionedCall", "ge:StatefulPartitionedCall", "ge:If", "ge:StatelessIf",
                                   "ge:_If", "ge:While", "ge:StatelessWhile", "ge:_While", "ge:Case",
                                   "ge:StatelessCase", "ge:For"};
  for (const char* t : ge)
    if (qualifiedType == t) return true;
  return false;
}

const char* groupKindName(ScopeGroup::Kind k) {
  switch (k) {
    case ScopeGroup::Kind::Scope: return "scope";
    case ScopeGroup::Kind::Repeat: return "repeat";
    case ScopeGroup::Kind::Chunk: return "chunk";
    case ScopeGroup::Kind::Body: return "body";
  }
  return "scope";
}

namespace {

using NodeIndex = std::unordered_map<int64_t, const ScopeTree::NodeName*>;

constexpr size_t kMinSubBlock = 24;  // blocks smaller than this are not searched for sub-blocks
constexpr int kMaxDepth = 2;         // layers, and blocks inside them
constexpr size_t kMaxLayersPerGroup = 32;

// The nodes of `run` as a sequence to search: op types and the positions of producers inside the run.
std::vector<SequenceNode> sequenceOf(const std::vector<int64_t>& run, const NodeIndex& nodes) {
  std::unordered_map<int64_t, int> pos;
  for (size_t i = 0; i < run.size(); ++i) pos[run[i]] = int(i);
  std::vector<SequenceNode> seq(run.size());
  for (size_t i = 0; i < run.size(); ++i) {
    auto it = nodes.find(run[i]);
    if (it == nodes.end()) continue;
    seq[i].opType = it->second->opType;
    for (int64_t in : it->second->inputs)
      if (auto p = pos.find(in); p != pos.end() && p->second < int(i)) seq[i].producers.push_back(p->second);
  }
  return seq;
}

class Structurer {
 public:
  Structurer(std::vector<ScopeGroup>& gs, const NodeIndex& nodes) : gs_(gs), nodes_(nodes) {}

  // `run` (loose node ids of group g, in graph order) as items: repeated blocks grouped, the rest loose. The search
  // runs over the computing nodes; constants (Constant, ConstantOfShape fills, and what computes only from them)
  // are exporters' preamble or per-layer noise in any order, so each joins the block of its first reader.
  std::vector<ScopeGroup::Item> items(int g, const std::vector<int64_t>& run, int depth) {
    std::vector<ScopeGroup::Item> out;
    std::vector<int64_t> anchors;
    std::unordered_map<int64_t, int64_t> anchorOf;  // satellite -> the computing node it serves (or itself)
    splitSatellites(run, anchors, anchorOf);
    const RepeatRun r = depth <= kMaxDepth ? findRepeat(sequenceOf(anchors, nodes_)) : RepeatRun{};
    if (r.blocks() < 2) return loose(run);
    // Block of every node of the run: its anchor's position among the anchors.
    std::unordered_map<int64_t, size_t> anchorPos;
    for (size_t i = 0; i < anchors.size(); ++i) anchorPos[anchors[i]] = i;
    auto blockOf = [&](int64_t id) -> long {
      auto a = anchorOf.find(id);
      auto p = a == anchorOf.end() ? anchorPos.end() : anchorPos.find(a->second);
      if (p == anchorPos.end() || p->second < r.first() || p->second >= r.end()) return -1;
      return long(r.blockOf(p->second));
    };
    std::vector<std::vector<int64_t>> blockNodes(r.blocks());
    std::vector<int64_t> before, after;
    for (int64_t id : run) {
      const long b = blockOf(id);
      if (b >= 0) {
        blockNodes[size_t(b)].push_back(id);
        continue;
      }
      auto a = anchorOf.find(id);
      auto p = a == anchorOf.end() ? anchorPos.end() : anchorPos.find(a->second);
      (p != anchorPos.end() && p->second >= r.end() ? after : before).push_back(id);
    }
    for (const auto& it : items(g, before, depth)) out.push_back(it);
    std::vector<std::string> ops;
    for (size_t i = r.typical; i < r.typical + r.period; ++i) ops.push_back(opOf(anchors[i]));
    const BlockDescription what = describeBlock(ops);
    const std::string word = what.attention ? "layer" : "block";
    int& counter = what.attention ? layers_[depth] : blocks_[depth];
    std::vector<int> blocks;
    for (size_t j = 0; j < r.blocks(); ++j) {
      const std::vector<int64_t>& nodes = blockNodes[j];
      ScopeGroup b;
      b.kind = ScopeGroup::Kind::Repeat;
      b.parent = g;
      b.instances = int(r.blocks());
      b.description = what.text;
      b.label = word + " " + std::to_string(++counter) + (what.text.empty() ? "" : " · " + what.text) + ", " +
                std::to_string(nodes.size()) + " nodes";
      b.path = gs_[size_t(g)].path + (gs_[size_t(g)].path.empty() ? "" : "/") + "@" + word + std::to_string(counter);
      b.totalNodes = int64_t(nodes.size());
      gs_.push_back(std::move(b));
      const int idx = int(gs_.size() - 1);
      std::vector<ScopeGroup::Item> inner =
          r.bounds[j + 1] - r.bounds[j] >= kMinSubBlock ? items(idx, nodes, depth + 1) : loose(nodes);
      gs_[size_t(idx)].items = std::move(inner);
      blocks.push_back(idx);
    }
    // Very deep models (a 128-layer decoder): layers in groups of 32, so no level lists more than a few dozen.
    if (blocks.size() > kMaxLayersPerGroup) {
      for (size_t k = 0; k < blocks.size(); k += kMaxLayersPerGroup) {
        const size_t n = std::min(kMaxLayersPerGroup, blocks.size() - k);
        ScopeGroup w;
        w.kind = ScopeGroup::Kind::Repeat;
        w.parent = g;
        w.description = what.text;
        w.label = word + "s " + std::to_string(counter - int(blocks.size() - k) + 1) + "–" +
                  std::to_string(counter - int(blocks.size() - k - n)) + (what.text.empty() ? "" : " · " + what.text);
        w.path = gs_[size_t(g)].path + (gs_[size_t(g)].path.empty() ? "" : "/") + "@" + w.label;
        gs_.push_back(std::move(w));
        const int wi = int(gs_.size() - 1);
        for (size_t i = k; i < k + n; ++i) {
          gs_[size_t(blocks[i])].parent = wi;
          gs_[size_t(wi)].items.push_back({true, blocks[i]});
          gs_[size_t(wi)].totalNodes += gs_[size_t(blocks[i])].totalNodes;
        }
        out.push_back({true, wi});
      }
    } else {
      for (int b : blocks) out.push_back({true, b});
    }
    for (const auto& it : items(g, after, depth)) out.push_back(it);
    return out;
  }

 private:
  // Satellites: constants and nodes computing only from constants, served to the first computing node that reads
  // them (transitively); the rest are anchors, in run order.
  void splitSatellites(const std::vector<int64_t>& run, std::vector<int64_t>& anchors,
                       std::unordered_map<int64_t, int64_t>& anchorOf) const {
    std::unordered_map<int64_t, bool> satellite, terminal;
    std::unordered_map<int64_t, std::vector<int64_t>> readers;
    std::unordered_map<int64_t, size_t> position;
    for (size_t i = 0; i < run.size(); ++i) position[run[i]] = i;
    for (int64_t id : run) {
      auto it = nodes_.find(id);
      // A graph input or output drawn as a terminal (no op type) is a satellite too: weights exported as inputs
      // and a KV cache's past_N belong with the layer that reads them, not in a block of their own. Unlike a
      // constant it makes no reader a satellite (everything computes from the inputs).
      const bool isTerminal = it != nodes_.end() && it->second->opType.empty();
      bool constant = it != nodes_.end() && (it->second->opType == "Constant" || it->second->opType == "ConstantOfShape");
      if (!constant && !isTerminal && it != nodes_.end() && !it->second->inputs.empty()) {
        constant = true;  // computes only from constants
        for (int64_t in : it->second->inputs) {
          auto s = satellite.find(in);
          if (s == satellite.end() || !s->second || terminal[in]) constant = false;
        }
      }
      terminal[id] = isTerminal;
      satellite[id] = constant || isTerminal;
      constant = satellite[id];
      if (it != nodes_.end())
        for (int64_t in : it->second->inputs) readers[in].push_back(id);
      if (!constant) {
        anchors.push_back(id);
        anchorOf[id] = id;
      }
    }
    // Each satellite's anchor: the first anchor reached through its readers (walked back from the end, so a
    // satellite's readers are resolved before it).
    for (auto it = run.rbegin(); it != run.rend(); ++it) {
      if (!satellite[*it]) continue;
      int64_t best = -1;
      for (int64_t reader : readers[*it])
        if (auto a = anchorOf.find(reader);
            a != anchorOf.end() && (best < 0 || position[a->second] < position[best]))
          best = a->second;
      if (best >= 0) anchorOf[*it] = best;
    }
    // Satellites nobody reads (a graph output's terminal) stay with their last producer's block.
    for (int64_t id : run) {
      if (!satellite[id] || anchorOf.count(id)) continue;
      auto it = nodes_.find(id);
      if (it == nodes_.end()) continue;
      int64_t best = -1;
      for (int64_t in : it->second->inputs)
        if (auto a = anchorOf.find(in); a != anchorOf.end() && (best < 0 || position[a->second] > position[best]))
          best = a->second;
      if (best >= 0) anchorOf[id] = best;
    }
  }
  static std::vector<ScopeGroup::Item> loose(const std::vector<int64_t>& ids) {
    std::vector<ScopeGroup::Item> out;
    for (int64_t id : ids) out.push_back({false, id});
    return out;
  }
  std::string opOf(int64_t id) const {
    auto it = nodes_.find(id);
    return it == nodes_.end() ? std::string() : it->second->opType;
  }
  std::vector<ScopeGroup>& gs_;
  const NodeIndex& nodes_;
  std::map<int, int> layers_, blocks_;  // numbering per depth
};

// Repeated blocks in the runs of loose nodes of any group that holds more than `maxItems` items.
void findStructure(std::vector<ScopeGroup>& gs, int g, size_t maxItems, Structurer& s) {
  for (const auto& it : std::vector<ScopeGroup::Item>(gs[size_t(g)].items))
    if (it.isGroup) findStructure(gs, int(it.id), maxItems, s);
  if (gs[size_t(g)].items.size() <= maxItems) return;
  std::vector<ScopeGroup::Item> out, items = gs[size_t(g)].items;
  std::vector<int64_t> run;
  auto flush = [&] {
    for (const auto& it : s.items(g, run, 0)) out.push_back(it);
    run.clear();
  };
  for (const auto& it : items) {
    if (it.isGroup) {
      flush();
      out.push_back(it);
    } else {
      run.push_back(it.id);
    }
  }
  flush();
  gs[size_t(g)].items = std::move(out);
}

// Merges single-child chains under `g` (recursively) and wraps long runs of loose nodes into chunks.
void tidy(std::vector<ScopeGroup>& gs, int g, size_t maxItems, const NodeIndex& nodes) {
  // Merge: while g (not the root) holds exactly one item and it is a group, absorb that group's items.
  while (g != 0 && gs[g].kind == ScopeGroup::Kind::Scope && gs[g].items.size() == 1 && gs[g].items[0].isGroup &&
         gs[gs[g].items[0].id].kind == ScopeGroup::Kind::Scope) {
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
    if (it.isGroup) tidy(gs, static_cast<int>(it.id), maxItems, nodes);
  // A group of one node says nothing the node does not: show the node in its place.
  for (auto& it : gs[g].items) {
    if (!it.isGroup) continue;
    ScopeGroup& child = gs[it.id];
    if (child.items.size() == 1 && !child.items[0].isGroup && child.kind == ScopeGroup::Kind::Scope) {
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
  // Pieces of about chunkSize nodes, cut where the fewest values cross (a layer's attention apart from its MLP),
  // each named by what it holds.
  auto flush = [&] {
    std::vector<size_t> bounds = quietCuts(sequenceOf(run, nodes), chunkSize);
    bounds.insert(bounds.begin(), 0);
    bounds.push_back(run.size());
    for (size_t b = 0; b + 1 < bounds.size(); ++b) {
      const size_t i = bounds[b], n = bounds[b + 1] - bounds[b];
      if (n < 4) {  // a handful of nodes is clearer loose than as a chunk
        for (size_t k = 0; k < n; ++k) out.push_back({false, run[i + k]});
        counted += static_cast<int64_t>(n);
        continue;
      }
      std::vector<std::string> ops;
      for (size_t k = 0; k < n; ++k)
        if (auto it = nodes.find(run[i + k]); it != nodes.end()) ops.push_back(it->second->opType);
      const BlockDescription what = describeBlock(ops);
      ScopeGroup c;
      c.path = gs[g].path + (gs[g].path.empty() ? "" : "/") + "#" + std::to_string(counted + 1);
      c.label = "nodes " + std::to_string(counted + 1) + "–" + std::to_string(counted + static_cast<int64_t>(n)) +
                (what.text.empty() ? "" : " · " + what.text);
      c.parent = g;
      c.chunk = true;
      c.kind = ScopeGroup::Kind::Chunk;
      c.description = what.text;
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

// Body groups: every (owner, attribute) pair gets a group right after its owner's item, in the group holding the
// owner; body nodes go into it loose, in the order given. Owners are placed before their bodies' nodes, whatever
// the input order (nested bodies: the owner is itself a body node). Nodes whose owner is unknown, or that sit on an
// ownership cycle of a damaged history, go to the root.
void placeBodies(std::vector<ScopeGroup>& gs, std::unordered_map<int64_t, int>& groupOfNode,
                 const std::vector<const ScopeTree::NodeName*>& bodyNodes,
                 const std::unordered_map<int64_t, const ScopeTree::NodeName*>& byId) {
  std::map<std::pair<int64_t, std::string>, int> bodyGroup;
  std::vector<const ScopeTree::NodeName*> pending = bodyNodes;
  while (!pending.empty()) {
    std::vector<const ScopeTree::NodeName*> later;
    for (const ScopeTree::NodeName* n : pending) {
      auto ownerGroup = groupOfNode.find(n->owner);
      if (ownerGroup == groupOfNode.end()) {
        later.push_back(n);
        continue;
      }
      const auto key = std::make_pair(n->owner, n->body);
      auto b = bodyGroup.find(key);
      if (b == bodyGroup.end()) {
        const int parent = ownerGroup->second;
        ScopeGroup body;
        body.kind = ScopeGroup::Kind::Body;
        body.parent = parent;
        body.owner = n->owner;
        body.description = n->body;
        auto o = byId.find(n->owner);
        const std::string ownerName =
            o == byId.end() ? "#" + std::to_string(n->owner)
                            : o->second->opType + (o->second->name.empty() ? "" : " '" + o->second->name + "'");
        body.label = (n->body.empty() ? std::string("body") : n->body) + " of " + ownerName;
        body.path = gs[size_t(parent)].path + (gs[size_t(parent)].path.empty() ? "" : "/") + "@" +
                    std::to_string(n->owner) + "." + n->body;
        gs.push_back(std::move(body));
        const int idx = int(gs.size() - 1);
        // After the owner and after bodies of the same owner already placed.
        auto& items = gs[size_t(parent)].items;
        auto at = std::find_if(items.begin(), items.end(),
                               [&](const ScopeGroup::Item& it) { return !it.isGroup && it.id == n->owner; });
        // If's then_branch reads first whatever order the file stores the attributes in (onnx.helper sorts them).
        if (at != items.end()) {
          ++at;
          while (at != items.end() && at->isGroup && gs[size_t(at->id)].kind == ScopeGroup::Kind::Body &&
                 gs[size_t(at->id)].owner == n->owner && n->body != "then_branch")
            ++at;
        }
        items.insert(at, {true, idx});
        b = bodyGroup.emplace(key, idx).first;
      }
      gs[size_t(b->second)].items.push_back({false, n->id});
      groupOfNode[n->id] = b->second;
      for (int a = b->second; a >= 0; a = gs[size_t(a)].parent) ++gs[size_t(a)].totalNodes;
    }
    if (later.size() == pending.size()) {  // owners that never appear: keep the nodes, at the root
      for (const ScopeTree::NodeName* n : later) {
        gs[0].items.push_back({false, n->id});
        groupOfNode[n->id] = 0;
        ++gs[0].totalNodes;
      }
      break;
    }
    pending = std::move(later);
  }
}

}  // namespace

ScopeTree ScopeTree::build(const std::vector<NodeName>& nodes, size_t maxItems) {
  std::vector<ScopeGroup> gs(1);
  std::vector<std::map<std::string, int>> childByName(1);
  std::unordered_map<int64_t, int> groupOfNode;
  std::vector<const NodeName*> bodyNodes;
  for (const auto& n : nodes) {
    if (n.owner != 0) {
      bodyNodes.push_back(&n);
      continue;
    }
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
    groupOfNode[n.id] = g;
    for (int a = g; a >= 0; a = gs[a].parent) ++gs[a].totalNodes;
  }
  NodeIndex index;
  for (const auto& n : nodes) index[n.id] = &n;
  placeBodies(gs, groupOfNode, bodyNodes, index);
  Structurer structurer(gs, index);
  findStructure(gs, 0, maxItems, structurer);
  tidy(gs, 0, maxItems, index);
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
