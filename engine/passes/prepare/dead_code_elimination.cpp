// DeadCodeElimination (GE's PrunePass): removes nodes none of whose outputs reach a graph output, and
// initializers nothing uses. Graph inputs stay: they are the model's interface. Inside a subgraph, a node that
// only feeds an outer node through a capture is live through that outer node. A GE graph's control edges (a dump's
// or an .om's "src:-1" inputs, kept in the "om.control_inputs" annotation: an Assign a NetOutput waits for) keep
// their source live as a data edge would, and a GE graph's NetOutput is live whatever it holds.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "ir/model.h"
#include "options/options.h"
#include "passes/prepare/prepare_passes.h"

namespace kiln {
namespace {

class DeadCodeElimination final : public Pass {
 public:
  std::string name() const override { return "DeadCodeElimination"; }

  PassResult run(PassContext& ctx) override {
    PassResult r;
    if (!ctx.options.getBool("oo_dead_code_elimination")) return r;
    prune(*ctx.model.graph, r);
    return r;
  }

 private:
  static void prune(Graph& g, PassResult& r) {
    // Mark from the outputs backwards; a node with subgraphs keeps what its subgraphs capture alive.
    std::unordered_set<const Node*> live;
    std::vector<const Node*> stack;
    auto need = [&](const Value* v) {
      if (v && v->producer() && v->producer()->graph() == &g) stack.push_back(v->producer());
    };
    for (const Value* v : g.outputs()) need(v);
    for (const Node* n : g.nodes())  // GE's NetOutput is its graph's end even when it holds only control edges
      if (n->domain() == "ge" && n->opType() == "NetOutput") stack.push_back(n);
    std::unordered_map<std::string, const Node*> byName;  // for control edges, which name their source
    while (!stack.empty()) {
      const Node* p = stack.back();
      stack.pop_back();
      if (!live.insert(p).second) continue;
      for (const Value* in : p->inputs()) need(in);
      for (const Graph* sg : p->subgraphs()) collectCaptures(g, *sg, need);
      const std::string control = p->annotation("om.control_inputs");
      if (control.empty()) continue;
      if (byName.empty())
        for (const Node* n : g.nodes()) byName.emplace(n->name(), n);
      for (size_t at = 0; at <= control.size();) {
        const size_t comma = std::min(control.find(',', at), control.size());
        if (auto it = byName.find(control.substr(at, comma - at)); it != byName.end()) stack.push_back(it->second);
        at = comma + 1;
      }
    }
    // Erase dead nodes in reverse order so consumers go before producers.
    auto order = g.topologicalOrder();
    std::vector<Node*> nodes = order ? *order : std::vector<Node*>(g.nodes().begin(), g.nodes().end());
    for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
      Node* n = *it;
      if (live.count(n)) continue;
      bool used = false;
      for (const Value* out : n->outputs())
        if (out && (out->hasUses() || out->isGraphOutput())) used = true;
      if (used) continue;  // used from somewhere we do not own (should not happen in a valid graph)
      g.eraseNode(n);
      r.add("nodes_removed");
    }
    for (Value* v : g.initializers()) {
      if (v->hasUses() || v->isGraphOutput() || v->isGraphInput()) continue;
      g.eraseValue(v);
      r.add("initializers_removed");
    }
    for (Node* n : g.nodes())
      for (Graph* sg : n->subgraphs()) prune(*sg, r);
  }

  template <typename Need>
  static void collectCaptures(const Graph& outer, const Graph& inner, Need& need) {
    for (const Node* n : inner.nodes()) {
      for (const Value* in : n->inputs())
        if (in && in->graph() == &outer) need(in);
      for (const Graph* sg : n->subgraphs()) collectCaptures(outer, *sg, need);
    }
  }
};

}  // namespace

std::unique_ptr<Pass> makeDeadCodeEliminationPass() { return std::make_unique<DeadCodeElimination>(); }

}  // namespace kiln
