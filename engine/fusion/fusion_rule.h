#pragma once
// A fusion rule: one pattern and its rewrite, with a stable name users know ("ConvBatchNormFusion"). The name is
// the key of ATC's fusion_switch, so a user can turn any rule off. Rules are written one per file; the GraphFusion
// pass (fusion/graph_fusion_pass.h) offers every node to the rules anchored at its op type until nothing
// matches any more. Plugins add rules through the plugin API (plugins/kiln_plugin.h, version 2).
#include <memory>
#include <string>
#include <vector>

namespace kiln {

class Node;
struct PassContext;

class FusionRule {
 public:
  virtual ~FusionRule() = default;
  virtual std::string name() const = 0;
  // Qualified op types ("Add", "com.microsoft:Gelu") of the node a match is anchored at — by convention the LAST
  // node of the pattern, whose outputs the fused node takes over. Only those nodes are offered to the rule.
  virtual std::vector<std::string> anchorTypes() const = 0;
  // Tries to match the pattern ending at `anchor`. On a match, rewrites the graph (normally with fuseNodes,
  // fused_node.h) and returns the fused node; otherwise returns null and leaves the graph untouched.
  virtual Node* apply(Node& anchor, PassContext& ctx) = 0;
};

using FusionRuleList = std::vector<std::shared_ptr<FusionRule>>;

}  // namespace kiln
