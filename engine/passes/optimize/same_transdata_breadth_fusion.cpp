// SameTransDataBreadthFusion (Stage 2): several TransData reading one value with the same conversion (layouts,
// origin shape, output type) compute the same tensor: one is kept, the others' consumers read it. A duplicate whose
// output is a graph output stays (the output keeps its name). Counter: transdata_removed.
#include <map>
#include <tuple>

#include "ir/model.h"
#include "passes/optimize/optimize_passes.h"
#include "passes/optimize/transdata_support.h"

namespace kiln {
namespace {

using Key = std::tuple<std::string, std::string, std::vector<int64_t>, std::string>;

Key keyOf(const Node& t) {
  return {t.attrString("src_format", ""), t.attrString("dst_format", ""), t.attrInts("origin_shape"),
          t.output(0)->type().toString() + "/" + std::string(formatName(t.output(0)->type().format))};
}

// Merges the duplicates among the TransData consumers of each value of g; true when one went.
bool mergeOnce(Graph& g, PassResult& r) {
  std::vector<std::vector<Node*>> groups;
  for (Value* v : g.values()) {
    std::map<Key, std::vector<Node*>> byKey;
    for (const Use& u : v->uses())
      if (isTransData(u.node) && u.node->graph() == &g && u.node->output(0)) byKey[keyOf(*u.node)].push_back(u.node);
    for (auto& [key, nodes] : byKey)
      if (nodes.size() > 1) groups.push_back(std::move(nodes));
  }
  bool changed = false;
  for (auto& nodes : groups) {
    Node* keep = nodes.front();
    for (Node* n : nodes)  // a graph-output one must stay anyway: it is the natural keeper
      if (n->output(0)->isGraphOutput()) keep = n;
    for (Node* dup : nodes) {
      if (dup == keep || dup->output(0)->isGraphOutput()) continue;
      g.replaceAllUsesWith(dup->output(0), keep->output(0));
      g.eraseNode(dup);
      r.add("transdata_removed");
      changed = true;
    }
  }
  return changed;
}

class SameTransDataBreadthFusion final : public Pass {
 public:
  std::string name() const override { return "SameTransDataBreadthFusion"; }
  PassResult run(PassContext& ctx) override {
    PassResult r;
    ctx.model.graph->forEachGraph([&](Graph& g) {
      bool merged = false;
      for (int round = 0; round < 8 && mergeOnce(g, r); ++round) merged = true;
      if (merged) g.sortTopologically();  // a kept TransData may sit after a merged one's consumers
    });
    return r;
  }
};

}  // namespace

std::unique_ptr<Pass> makeSameTransDataBreadthFusionPass() { return std::make_unique<SameTransDataBreadthFusion>(); }

}  // namespace kiln
