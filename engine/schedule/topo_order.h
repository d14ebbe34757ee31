#pragma once
// The execution order of a graph's nodes, in the four modes of ATC's --topo_sorting_mode. The order decides which
// tensors are alive together (memory) and which independent branches run first (streams), so users switch it.
//   BFS         Kahn's algorithm with a FIFO: level by level, the widest live set, most parallelism exposed.
//   DFS         Kahn's algorithm with a LIFO (GE's default): a consumer runs as soon as its inputs are ready, so a
//               chain is followed to its end before the next branch starts.
//   RDFS        reverse DFS: post-order from the graph outputs, the LAST output and the last input first, so each
//               output's cone is computed in one go just before it is needed.
//   StableRDFS  the same walk from the first output and the first input, keeping the original order as far as
//               dependencies allow (GE's stable variant).
// Nodes no output depends on (kept for their side effects) follow in their current order in the RDFS modes.
#include <optional>
#include <string_view>
#include <vector>

namespace kiln {

class Graph;
class Node;

enum class TopoMode { BFS = 0, DFS = 1, RDFS = 2, StableRDFS = 3 };

std::string_view topoModeName(TopoMode m);
// Nullopt when the graph has a cycle. Uses from subgraphs count as dependencies of the owning node.
std::optional<std::vector<Node*>> topoOrder(const Graph& g, TopoMode mode);

}  // namespace kiln
