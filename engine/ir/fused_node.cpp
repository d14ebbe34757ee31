#include "ir/fused_node.h"

#include "util/json.h"

#include <algorithm>
#include <charconv>
#include <stdexcept>
#include <unordered_set>

#include "ir/graph.h"

namespace kiln {

namespace {

bool contains(const std::vector<Value*>& vs, const Value* v) { return std::find(vs.begin(), vs.end(), v) != vs.end(); }

std::string joinIds(const std::vector<int64_t>& ids) {
  std::string s;
  for (int64_t id : ids) {
    if (!s.empty()) s += ',';
    s += std::to_string(id);
  }
  return s;
}

}  // namespace

std::vector<int64_t> nodeIdList(std::string_view s) {
  std::vector<int64_t> ids;
  const char* p = s.data();
  const char* end = s.data() + s.size();
  while (p < end) {
    int64_t id = 0;
    auto [next, ec] = std::from_chars(p, end, id);
    if (ec != std::errc()) break;  // annotations are ours, but a plugin could write anything: stop at garbage
    ids.push_back(id);
    if (next == end || *next != ',') break;
    p = next + 1;
  }
  return ids;
}

std::vector<int64_t> replacedNodeIds(const Node& n) { return nodeIdList(n.annotation("fusion.replaced")); }

std::vector<std::string> originalNodeNames(const Node& n) {
  const std::string text = n.annotation("fusion.original_names");
  std::vector<std::string> out;
  if (text.empty()) return out;
  try {
    const Json j = Json::parse(text, 4);
    if (j.isArray())
      for (const Json& x : j.asArray())
        if (x.isString()) out.push_back(x.asString());
  } catch (const JsonError&) {
  }
  return out;
}

int64_t hbmBytesSaved(const std::vector<Node*>& group, const std::vector<Value*>& keptOutputs, int* unknownSized) {
  int64_t saved = 0;
  for (const Node* n : group)
    for (const Value* out : n->outputs()) {
      if (!out || contains(keptOutputs, out)) continue;
      const auto bytes = out->type().byteSize();
      if (!bytes) {  // dynamic shape: counted apart rather than guessed
        if (unknownSized) ++*unknownSized;
        continue;
      }
      saved += *bytes * static_cast<int64_t>(1 + out->uses().size());
    }
  return saved;
}

Node* fuseNodes(const std::vector<Node*>& group, const FusedNodeSpec& spec, const std::string& ruleName) {
  if (group.empty()) throw std::logic_error(ruleName + ": empty fusion group");
  Graph& g = *group.front()->graph();
  const std::unordered_set<const Node*> members(group.begin(), group.end());
  // Every value produced inside and not kept must be consumed only inside, or erasing the group would dangle.
  for (const Node* n : group) {
    if (n->graph() != &g) throw std::logic_error(ruleName + ": fusion group spans graphs");
    for (const Value* out : n->outputs()) {
      if (!out || contains(spec.outputs, out)) continue;
      if (out->isGraphOutput()) throw std::logic_error(ruleName + ": intermediate " + out->name() + " is a graph output");
      for (const Use& u : out->uses())
        if (!members.count(u.node))
          throw std::logic_error(ruleName + ": intermediate " + out->name() + " is used outside the group");
    }
  }
  // The fused node goes where the group's last node is, so all its inputs are defined before it. The group in list
  // order, from the graph's order keys: a fusion costs its group, not the graph.
  std::vector<Node*> order(group.begin(), group.end());
  std::sort(order.begin(), order.end(), [&g](const Node* a, const Node* b) { return g.comesBefore(a, b); });
  order.erase(std::unique(order.begin(), order.end()), order.end());
  Node* last = order.back();
  std::vector<int64_t> replaced;
  for (const Node* n : group) {
    const auto inner = replacedNodeIds(*n);
    if (inner.empty()) replaced.push_back(static_cast<int64_t>(n->id()));
    else replaced.insert(replaced.end(), inner.begin(), inner.end());
  }
  std::sort(replaced.begin(), replaced.end());
  // The names of the original nodes, in graph order (GE's _datadump_original_op_names, which the .om writer copies).
  Json names = Json::array();
  for (const Node* n : order) {
    const std::vector<std::string> inner = originalNodeNames(*n);
    if (inner.empty()) names.push(n->name());
    else
      for (const std::string& x : inner) names.push(x);
  }
  int unknownSized = 0;
  const int64_t saved = hbmBytesSaved(group, spec.outputs, &unknownSized);

  std::vector<std::string> outNames;
  for (const Value* v : spec.outputs) outNames.push_back(v->name() + "_fused");
  Node* fused = g.addNode(spec.opType, spec.inputs, outNames, spec.name.empty() ? last->name() : spec.name,
                          spec.domain, last);
  for (const auto& a : spec.attrs) fused->setAttr(a.name, a.value);
  for (size_t i = 0; i < spec.outputs.size(); ++i) {
    Value* old = spec.outputs[i];
    Value* now = fused->output(i);
    now->setType(old->type());
    g.replaceAllUsesWith(old, now);
  }
  // Erase consumers before producers: a node can only go once its outputs are unused.
  for (auto it = order.rbegin(); it != order.rend(); ++it) g.eraseNode(*it);
  // Names are free again: the outputs take over the names users know from the original graph.
  for (size_t i = 0; i < spec.outputs.size(); ++i) {
    std::string n = outNames[i];
    n.resize(n.size() - 6);
    fused->output(i)->setName(std::move(n));
  }
  fused->setAnnotation("fusion.rule", ruleName);
  fused->setAnnotation("fusion.replaced", joinIds(replaced));
  fused->setAnnotation("fusion.original_names", names.dump());
  fused->setAnnotation("fusion.hbm_bytes_saved", std::to_string(saved));
  if (unknownSized) fused->setAnnotation("fusion.hbm_unknown_tensors", std::to_string(unknownSized));
  return fused;
}

}  // namespace kiln
