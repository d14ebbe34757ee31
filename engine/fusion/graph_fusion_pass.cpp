#include "fusion/graph_fusion_pass.h"

#include <stdexcept>

#include "ir/graph.h"
#include "ir/model.h"
#include "options/options.h"

namespace kiln {

namespace {

// One rule swept over the whole model to a fixpoint. Rules run one at a time, in list order, as GE runs its graph
// fusion passes by priority: a larger pattern (attention) must see its MatMuls before a smaller rule (transpose
// into MatMul) takes them apart, and a rule that builds on another's result (Add+LayerNorm on LayerNorm) comes
// after it.
class RuleSweep final : public NodePass {
 public:
  explicit RuleSweep(FusionRule& rule) : rule_(rule) {
    for (std::string& t : rule_.anchorTypes()) anchors_.push_back(std::move(t));
  }
  std::string name() const override { return rule_.name(); }

 protected:
  bool visit(Node& node, PassContext& ctx, NodeWorklist& work, PassResult& result) override {
    bool anchored = false;
    for (const std::string& t : anchors_) anchored = anchored || node.hasQualifiedType(t);
    if (!anchored) return false;
    Node* fused = nullptr;
    try {
      fused = rule_.apply(node, ctx);
    } catch (const std::exception& e) {
      // The graph may be half-rewritten: the run must stop here, naming the rule.
      throw std::runtime_error("fusion rule " + rule_.name() + " failed at node '" + node.name() + "': " + e.what());
    }
    if (!fused) return false;
    // A fused op of Kiln's (or a plugin's) domain needs that domain imported for the model to stay valid.
    if (!fused->domain().empty()) ctx.model.opsets.emplace(fused->domain(), 1);
    work.touched(fused);
    result.add(rule_.name());
    const std::string saved = fused->annotation("fusion.hbm_bytes_saved");
    result.add("hbm_bytes_saved", saved.empty() ? 0 : std::stoll(saved));
    return true;  // `node` may be gone; the driver revisits the fused node and its neighbours
  }

 private:
  FusionRule& rule_;
  std::vector<std::string> anchors_;
};

class GraphFusion final : public Pass {
 public:
  GraphFusion(std::string name, FusionRuleList rules) : name_(std::move(name)), rules_(std::move(rules)) {}
  std::string name() const override { return name_; }

  PassResult run(PassContext& ctx) override {
    PassResult total;
    // A later rule's rewrite can open a match for an earlier one (rarely); a few rounds settle it.
    constexpr int kMaxRounds = 4;
    for (int round = 0; round < kMaxRounds; ++round) {
      bool changed = false;
      for (const auto& rule : rules_) {
        if (!ctx.options.fusionEnabled(rule->name())) continue;
        RuleSweep sweep(*rule);
        const PassResult r = sweep.run(ctx);
        changed = changed || r.changed;
        for (const auto& [k, v] : r.counters) total.add(k, v);
      }
      total.changed = total.changed || changed;
      if (!changed) break;
    }
    return total;
  }

 private:
  std::string name_;
  FusionRuleList rules_;
};

}  // namespace

std::unique_ptr<Pass> makeGraphFusionPass(FusionRuleList rules, std::string passName) {
  return std::make_unique<GraphFusion>(std::move(passName), std::move(rules));
}

}  // namespace kiln
