#include "passes/optimize/graph_fusion.h"

#include <stdexcept>
#include <unordered_map>

#include "ir/graph.h"
#include "ir/model.h"
#include "passes/options.h"

namespace kiln {

namespace {

class GraphFusion final : public NodePass {
 public:
  explicit GraphFusion(FusionRuleList rules) : rules_(std::move(rules)) {}
  std::string name() const override { return "GraphFusion"; }

 protected:
  void begin(PassContext& ctx) override {
    byAnchor_.clear();
    for (const auto& r : rules_) {
      if (!ctx.options.fusionEnabled(r->name())) continue;
      for (const std::string& t : r->anchorTypes()) byAnchor_[t].push_back(r.get());
    }
  }

  bool visit(Node& node, PassContext& ctx, NodeWorklist& work, PassResult& result) override {
    if (byAnchor_.empty()) return false;
    const auto it = byAnchor_.find(node.qualifiedType());
    if (it == byAnchor_.end()) return false;
    for (FusionRule* rule : it->second) {
      Node* fused = nullptr;
      try {
        fused = rule->apply(node, ctx);
      } catch (const std::exception& e) {
        // The graph may be half-rewritten: the run must stop here, naming the rule.
        throw std::runtime_error("fusion rule " + rule->name() + " failed at node '" + node.name() + "': " + e.what());
      }
      if (!fused) continue;
      // A fused op of Kiln's (or a plugin's) domain needs that domain imported for the model to stay valid.
      if (!fused->domain().empty()) ctx.model.opsets.emplace(fused->domain(), 1);
      work.touched(fused);
      result.add(rule->name());
      const std::string saved = fused->annotation("fusion.hbm_bytes_saved");
      result.add("hbm_bytes_saved", saved.empty() ? 0 : std::stoll(saved));
      return true;  // `node` is gone; the driver revisits the fused node and its neighbours
    }
    return false;
  }

 private:
  FusionRuleList rules_;
  std::unordered_map<std::string, std::vector<FusionRule*>> byAnchor_;
};

}  // namespace

std::unique_ptr<Pass> makeGraphFusionPass(FusionRuleList rules) {
  return std::make_unique<GraphFusion>(std::move(rules));
}

}  // namespace kiln
