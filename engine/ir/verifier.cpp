#include "ir/verifier.h"

#include <algorithm>

#include "ir/graph.h"
#include "ir/model.h"
#include "ir/opdefs/op_registry.h"

namespace kiln {
namespace {

std::string nodeLabel(const Node* n) { return "node '" + n->name() + "' (" + n->qualifiedType() + ")"; }

// The checks of one node: back-pointer, inputs defined and visible and on their use lists, producers of its
// outputs, and (for nodes changed after options.changedSince) the op's signature.
void checkNode(const Graph& g, const Node* n, const std::string& gname, const Model* model, int64_t defaultOpset,
               const VerifyOptions& options, std::vector<std::string>& out) {
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
  if (options.checkTypes && n->definitionRevision() > options.changedSince) {
    const int64_t opset = model ? model->opsetFor(n->domain()) : (n->domain().empty() ? defaultOpset : 0);
    if (auto problem = OpRegistry::global().checkSignature(*n, opset)) out.push_back(gname + nodeLabel(n) + ": " + *problem);
  }
}

void checkUses(const Value* v, const std::string& gname, std::vector<std::string>& out) {
  for (const Use& u : v->uses())
    if (u.index >= u.node->numInputs() || u.node->input(u.index) != v)
      out.push_back(gname + "value '" + v->name() + "' lists a use that does not refer to it");
}

void checkOutputs(const Graph& g, const std::string& gname, std::vector<std::string>& out) {
  for (const Value* v : g.outputs())
    if (!g.isVisible(v)) out.push_back(gname + "graph output '" + v->name() + "' is not defined");
}

void verifyOne(const Graph& g, const Model* model, int64_t defaultOpset, const VerifyOptions& options,
               std::vector<std::string>& out) {
  const std::string gname = g.parent() ? "subgraph '" + g.name() + "': " : "";
  if (!g.topologicalOrder()) out.push_back(gname + "graph contains a cycle");
  for (const Node* n : g.nodes()) checkNode(g, n, gname, model, defaultOpset, options, out);
  for (const Value* v : g.values()) checkUses(v, gname, out);
  checkOutputs(g, gname, out);
}

// The node of `g` that holds `n` (n itself, or the owner of the subgraph n sits in); null if none.
const Node* ancestorIn(const Graph& g, const Node* n) {
  while (n && n->graph() != &g) n = n->graph() ? n->graph()->owner() : nullptr;
  return n;
}

// Whether every edge into n runs forward along the node list of the graph that holds its producer: an input of n's
// own graph comes from an earlier node, a capture from an enclosing graph from a node before the one holding n.
bool inputsForward(const Node* n) {
  for (const Value* in : n->inputs()) {
    if (!in || !in->producer()) continue;
    const Graph& pg = *in->graph();
    const Node* holder = ancestorIn(pg, n);
    if (!holder || holder == in->producer() || !pg.comesBefore(in->producer(), holder)) return false;
  }
  return true;
}

// Whether every edge out of n (to users in its graph or, through captures, in subgraphs of later nodes) runs
// forward.
bool outputsForward(const Graph& g, const Node* n) {
  for (const Value* o : n->outputs())
    if (o)
      for (const Use& u : o->uses()) {
        const Node* user = ancestorIn(g, u.node);
        if (!user || user == n || !g.comesBefore(n, user)) return false;
      }
  return true;
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

// ------------------------------------------------------------------------------------------------ IncrementalVerifier

std::vector<std::string> IncrementalVerifier::check(const Model& m) {
  const IdSource& ids = m.graph->ids();
  std::vector<std::string> out;
  const bool first = ids_ != m.graph->idSource();
  ids_ = m.graph->idSource();
  if (first) verifiedAt_ = orderAt_ = 0;
  VerifyOptions options;
  options.changedSince = verifiedAt_;
  if (!first && ids.definitionRevision <= verifiedAt_) {  // the pass changed nothing, or only annotations
    verifiedAt_ = ids.revision;
    return out;
  }
  // While every graph's node list was a topological order at the last check and no node has moved since, a new
  // cycle must use an edge of a changed node (untouched nodes kept their edges and their relative order; a new
  // subgraph's nodes are all new): if all of those run forward, every list is still a topological order.
  bool fullCycleCheck = first || !forward_ || ids.orderRevision != orderAt_;
  m.graph->forEachGraph([&](const Graph& g) {
    const std::string gname = g.parent() ? "subgraph '" + g.name() + "': " : "";
    for (const Node* n : g.nodes()) {
      if (!first && n->definitionRevision() <= verifiedAt_) continue;
      checkNode(g, n, gname, &m, m.opsetFor(""), options, out);
      if (!fullCycleCheck && !(inputsForward(n) && outputsForward(g, n))) fullCycleCheck = true;
    }
    for (const Value* v : g.values())
      if (first || v->revision() > verifiedAt_) checkUses(v, gname, out);
    checkOutputs(g, gname, out);
  });
  if (fullCycleCheck) {
    forward_ = true;
    m.graph->forEachGraph([&](const Graph& g) {
      if (!g.topologicalOrder()) out.push_back((g.parent() ? "subgraph '" + g.name() + "': " : "") +
                                               "graph contains a cycle");
      if (forward_)
        for (const Node* n : g.nodes())
          if (!inputsForward(n)) {
            forward_ = false;
            break;
          }
    });
  }
  verifiedAt_ = ids.revision;
  orderAt_ = ids.orderRevision;
  return out;
}

}  // namespace kiln
