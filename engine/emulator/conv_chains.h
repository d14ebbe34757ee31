#pragma once
// Which Conv nodes of a graph the reference mode runs together with the per-channel element-wise nodes after them
// (kernels/conv_followers.h): Conv → BatchNormalization → Relu as one kernel call instead of three passes over the
// activation. A link holds when the value between is read by the next node only (once, by no subgraph), is not an
// output of the graph and is kept in no blocked layout, and when the next node's other operands exist before the Conv
// runs (constants, graph inputs, values of enclosing graphs or of nodes earlier in `order`).
#include <unordered_map>
#include <vector>

#include "ir/graph.h"

namespace kiln {

// Per Conv with at least one follower: the followers in order. `order` is g's topological order.
std::unordered_map<const Node*, std::vector<const Node*>> planConvChains(const Graph& g, const std::vector<Node*>& order);

}  // namespace kiln
