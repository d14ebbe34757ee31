#pragma once
// Which Conv nodes of a graph the reference mode runs together with the per-channel element-wise nodes after them
// (kernels/conv_followers.h): Conv → BatchNormalization → Relu as one kernel call instead of three passes over the
// activation. A link holds when the value between is read by the next node only (once, by no subgraph), is not an
// output of the graph and is kept in no blocked layout, and when the next node's other operands exist before the Conv
// runs (constants, graph inputs, values of enclosing graphs or of nodes earlier in `order` — or made by one node
// later in `order` from such values alone, which then runs early).
#include <unordered_map>
#include <vector>

#include "ir/graph.h"

namespace kiln {

struct ConvChain {
  std::vector<const Node*> followers;  // in order, each reading the previous one's output
  // Nodes later in `order` that make a follower's other operand from values that exist before the Conv (an
  // Unsqueeze of a per-channel constant): run just before the chain instead of at their place.
  std::vector<const Node*> early;
};

// Per Conv with at least one follower. `order` is g's topological order.
std::unordered_map<const Node*, ConvChain> planConvChains(const Graph& g, const std::vector<Node*>& order);

}  // namespace kiln
