// TopologicalSort: puts the nodes of every graph in the execution order topo_sorting_mode asks for (0 BFS, 1 DFS,
// 2 RDFS, 3 StableRDFS; schedule/topo_order.h says what each means). Later stages take the node order as the
// execution order: streams, task lists and tensor lifetimes all follow it. Counter: nodes that moved.
#include <stdexcept>

#include "ir/graph.h"
#include "ir/model.h"
#include "passes/optimize/schedule_passes.h"
#include "options/options.h"
#include "schedule/topo_order.h"

namespace kiln {
namespace {

class TopologicalSort final : public Pass {
 public:
  std::string name() const override { return "TopologicalSort"; }

  PassResult run(PassContext& ctx) override {
    const auto mode = static_cast<TopoMode>(ctx.options.getInt("topo_sorting_mode"));
    PassResult r;
    ctx.model.graph->forEachGraph([&](Graph& g) {
      auto order = topoOrder(g, mode);
      if (!order) throw std::runtime_error("graph '" + g.name() + "' has a cycle");
      size_t i = 0;
      for (Node* n : g.nodes()) r.add("moved", n == (*order)[i++] ? 0 : 1);
      for (Node* n : *order) g.moveBefore(n, nullptr);
    });
    r.changed = r.counters["moved"] > 0;
    r.counters["mode_" + std::string(topoModeName(mode))] = 1;
    return r;
  }
};

}  // namespace

std::unique_ptr<Pass> makeTopologicalSortPass() { return std::make_unique<TopologicalSort>(); }

}  // namespace kiln
