#include "report/model_structure.h"

#include "ir/graph.h"

namespace kiln {

namespace {

void addNames(const Graph& g, int64_t owner, const std::string& body, std::vector<layout::ScopeTree::NodeName>& out,
              int depth) {
  const auto order = g.topologicalOrder();
  std::vector<const Node*> nodes;
  if (order) nodes.assign(order->begin(), order->end());
  else
    for (const Node* n : g.nodes()) nodes.push_back(n);
  for (const Node* n : nodes) {
    std::vector<int64_t> producers;
    for (const Value* v : n->inputs())
      if (v && v->producer()) producers.push_back(v->producer()->id());
      else if (v && !v->constant()) producers.push_back(-1);  // a graph input: data, not a constant
    out.push_back({n->id(), n->name(), n->qualifiedType(), std::move(producers), owner, body});
  }
  // The loaders bound nesting; this bound only keeps a hand-built graph from recursing without end.
  if (depth >= 64) return;
  for (const Node* n : nodes) {
    if (!layout::isControlFlowOp(n->qualifiedType())) continue;  // a fused kernel's originals are not a body
    for (const NamedAttribute& a : n->attributes()) {
      if (const auto* one = a.value.get<Attribute::GraphPtr>(); one && *one) addNames(**one, n->id(), a.name, out, depth + 1);
      if (const auto* many = a.value.get<std::vector<Attribute::GraphPtr>>())
        for (const auto& sub : *many)
          if (sub) addNames(*sub, n->id(), a.name, out, depth + 1);
    }
  }
}

}  // namespace

std::vector<layout::ScopeTree::NodeName> structureNames(const Graph& g) {
  std::vector<layout::ScopeTree::NodeName> names;
  names.reserve(g.numNodes());
  addNames(g, 0, "", names, 0);
  return names;
}

layout::ScopeTree modelStructure(const Graph& g) { return layout::ScopeTree::build(structureNames(g)); }

namespace {

Json groupJson(const layout::ScopeTree& tree, int g) {
  const layout::ScopeGroup& group = tree.group(g);
  Json j = Json::object();
  j.set("name", group.label);
  j.set("kind", layout::groupKindName(group.kind));
  j.set("nodes", group.totalNodes);
  if (group.kind == layout::ScopeGroup::Kind::Repeat) {
    j.set("instances", group.instances);
    j.set("contains", group.description);
  }
  if (group.kind == layout::ScopeGroup::Kind::Body) {
    j.set("owner_node", group.owner);
    j.set("attribute", group.description);
  }
  Json children = Json::array();
  int64_t loose = 0;
  for (const auto& it : group.items) {
    if (it.isGroup) children.push(groupJson(tree, int(it.id)));
    else ++loose;
  }
  j.set("loose_nodes", loose);
  j.set("children", std::move(children));
  return j;
}

void outline(const layout::ScopeTree& tree, int g, int depth, int maxDepth, std::string& out) {
  const layout::ScopeGroup& group = tree.group(g);
  int shownOfRun = 0;
  std::string runDescription;
  int folded = 0;
  auto foldLine = [&] {
    if (folded) out += std::string(size_t(2 * depth + 2), ' ') + "… " + std::to_string(folded) + " more alike\n";
    folded = 0;
  };
  int64_t loose = 0;
  for (const auto& it : group.items) {
    if (!it.isGroup) {
      ++loose;
      continue;
    }
    const layout::ScopeGroup& c = tree.group(int(it.id));
    const bool instance = c.kind == layout::ScopeGroup::Kind::Repeat && c.instances > 0;
    if (instance && c.description == runDescription && shownOfRun >= 3) {
      ++folded;
      continue;
    }
    foldLine();
    shownOfRun = instance && c.description == runDescription ? shownOfRun + 1 : (instance ? 1 : 0);
    runDescription = instance ? c.description : std::string();
    out += std::string(size_t(2 * depth + 2), ' ') + c.label;
    if (c.kind != layout::ScopeGroup::Kind::Repeat) out += " (" + std::to_string(c.totalNodes) + " nodes)";
    out += "  [" + std::string(layout::groupKindName(c.kind)) +
           (instance ? ", " + std::to_string(c.instances) + " alike" : std::string()) + "]\n";
    if (depth + 1 < maxDepth) outline(tree, int(it.id), depth + 1, maxDepth, out);
  }
  foldLine();
  if (loose && depth > 0 && group.items.size() > size_t(loose))
    out += std::string(size_t(2 * depth + 2), ' ') + std::to_string(loose) + " nodes outside the groups\n";
}

}  // namespace

Json structureToJson(const layout::ScopeTree& tree) {
  Json root = groupJson(tree, 0);
  return *root.find("children");
}

std::string structureOutline(const layout::ScopeTree& tree, int maxDepth) {
  const layout::ScopeGroup& root = tree.group(0);
  int64_t loose = 0;
  for (const auto& it : root.items) loose += it.isGroup ? 0 : 1;
  std::string out = "Structure (" + std::to_string(root.totalNodes) + " nodes; " + std::to_string(loose) +
                    " outside any group)\n";
  outline(tree, 0, 0, maxDepth, out);
  return out;
}

}  // namespace kiln
