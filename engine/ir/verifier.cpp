#include "ir/verifier.h"

#include <algorithm>

#include "ir/graph.h"
#include "ir/model.h"
#include "ir/opdefs/op_registry.h"

namespace kiln {
namespace {

std::string nodeLabel(const Node* n) { return "node '" + n->name() + "' (" + n->qualifiedType() + ")"; }

void verifyOne(const Graph& g, const Model* model, int64_t defaultOpset, const VerifyOptions& options,
               std::vector<std::string>& out) {
  const std::string gname = g.parent() ? "subgraph '" + g.name() + "': " : "";
  if (!g.topologicalOrder()) out.push_back(gname + "graph contains a cycle");

  for (const Node* n : g.nodes()) {
    if (n->graph() != &g) out.push_back(gname + nodeLabel(n) + " has a wrong graph back-pointer");
    for (size_t i = 0; i < n->numInputs(); ++i) {
      const Value* v = n->input(i);
      if (!v) continue;
      if (!g.isVisible(v)) {
        out.push_back(gname + nodeLabel(n) + ": input " + std::to_string(i) + " ('" + v->name() +
                      "') is not defined in this graph or an enclosing one");
        continue;
      }
      const auto& uses = v->uses();
      const size_t slot = n->useSlotOf(i);
      if (slot >= uses.size() || !(uses[slot] == Use{const_cast<Node*>(n), i}))
        out.push_back(gname + nodeLabel(n) + ": input " + std::to_string(i) + " missing from the use list of '" +
                      v->name() + "'");
      if (!v->producer() && !v->isGraphInput() && !v->constant())
        out.push_back(gname + nodeLabel(n) + ": input '" + v->name() + "' has no producer and no data");
    }
    for (size_t i = 0; i < n->numOutputs(); ++i) {
      const Value* v = n->output(i);
      if (v && (v->producer() != n || v->producerIndex() != i || v->graph() != &g))
        out.push_back(gname + nodeLabel(n) + ": output " + std::to_string(i) + " has an inconsistent producer");
    }
    if (options.checkTypes && n->revision() > options.changedSince) {
      const int64_t opset = model ? model->opsetFor(n->domain()) : (n->domain().empty() ? defaultOpset : 0);
      if (auto problem = OpRegistry::global().checkSignature(*n, opset)) out.push_back(gname + nodeLabel(n) + ": " + *problem);
    }
  }
  for (const Value* v : g.values()) {
    for (const Use& u : v->uses()) {
      if (u.index >= u.node->numInputs() || u.node->input(u.index) != v)
        out.push_back(gname + "value '" + v->name() + "' lists a use that does not refer to it");
    }
  }
  for (const Value* v : g.outputs())
    if (!g.isVisible(v)) out.push_back(gname + "graph output '" + v->name() + "' is not defined");
}

}  // namespace

std::vector<std::string> verifyGraph(const Graph& g, int64_t defaultOpset, const VerifyOptions& options) {
  std::vector<std::string> out;
  g.forEachGraph([&](const Graph& sg) { verifyOne(sg, nullptr, defaultOpset, options, out); });
  return out;
}

std::vector<std::string> verifyModel(const Model& m, const VerifyOptions& options) {
  std::vector<std::string> out;
  m.graph->forEachGraph([&](const Graph& sg) { verifyOne(sg, &m, m.opsetFor(""), options, out); });
  return out;
}

}  // namespace kiln
