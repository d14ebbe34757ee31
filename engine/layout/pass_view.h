#pragma once
// The graph a user sees for "after pass k, compared with pass j": every node of the main graph present at either
// pass (nodes the pass removed stay as ghosts), each with its diff state and what changed, the edges between them,
// and the graph's inputs and outputs as small terminal nodes. Nodes come in a topological order of that union, so
// chunked groups follow the data flow; ties go to the exporter's order (a compiled graph's fused and inserted nodes sit
// where the nodes they came from were), so its layers are found as they were in the imported graph. Control-flow bodies (If's branches, Loop's and Scan's body) are part of it:
// their nodes carry their owner, a body's inputs and outputs are terminals inside it, each body output feeds its
// owner node (the body computes what the owner yields), and a value a body captures from outside is an edge from its
// producer into the body.
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "history/history_reader.h"
#include "layout/scope_tree.h"
#include "layout/view_graph.h"

namespace kiln {
class Graph;
}

namespace kiln::layout {

enum class NodeState { Unchanged, Added, Changed, Removed };

struct PassViewNode {
  int64_t id = 0;  // node id; terminals (graph inputs/outputs) use negative ids, see terminalValue()
  enum class Kind { Op, Input, Output } kind = Kind::Op;
  std::string name, opType, domain;
  std::string unit;  // annotation "unit" (cube/vector/aicpu/host) when the validity check has run
  int64_t owner = 0;  // in a control-flow body: the node holding it (0 in the main graph)
  std::string body;   // that node's attribute holding the body
  int64_t origin = 0;  // a fused node: the first imported node it replaced (0 otherwise); orders the view
  NodeState state = NodeState::Unchanged;
  std::vector<std::string> changes;  // "attr:axis", "inputs", "output shape", ... (Changed only)
};

// Which annotations the nodes after a pass carry, for the overlay menu (node_overlay.h).
struct AnnotationKeys {
  bool planned = false;              // "mem.out" with numbers: an arena offset to colour by
  bool units = false;                // "unit": the compute unit
  std::vector<std::string> numeric;  // other keys with numeric values, sorted
};

struct PassView {
  int64_t runId = 0;
  int fromPass = -1, toPass = 0;
  std::vector<PassViewNode> nodes;  // topological order of the union
  std::vector<NodeEdge> edges;
  GraphSnapshot after, before;      // the full rows, for the inspector
  const PassViewNode* node(int64_t id) const;
  std::unordered_map<int64_t, size_t> index;  // node id -> position in nodes
  int64_t ops = 0;  // op nodes of the main graph after the pass (ghosts, terminals and body nodes excluded)
  int64_t bodyOps = 0;  // op nodes inside control-flow bodies after the pass
  int64_t added = 0, removed = 0, changed = 0;  // op nodes, bodies included (terminals are drawn but not counted)
  int64_t importedMaxId = 0;  // largest node id of the imported graph (0: unknown); see provenanceKeys in the .cpp
  // Its groups (scopes, repeated layers, bodies, chunks), found where the view is built (a worker thread): on a
  // 40k-node graph the search takes longer than a frame.
  std::shared_ptr<const ScopeTree> scopes;
  // Found there too: parsing every node's annotations takes ~100 ms at 50k nodes. Null: not looked for yet.
  std::shared_ptr<const AnnotationKeys> annotationKeys;
};

// Terminal node ids: the graph input (or a value entering a drawn part from outside) and the graph output (or a
// value leaving it) carrying value `valueId`; terminalValue() gives the value back.
int64_t inputTerminal(int64_t valueId);
int64_t outputTerminal(int64_t valueId);
int64_t terminalValue(int64_t terminalId);

// `fromPass` < 0: no comparison (everything Unchanged). Reads through `reader`; throws HistoryError.
PassView buildPassView(const HistoryReader& reader, int64_t runId, int toPass, int fromPass);
// The same view of a live graph, as it is now (no comparison): for reports drawn without a history.
PassView passViewOf(const Graph& g);

// Names for the scope tree, in view order (terminals go to the root).
std::vector<ScopeTree::NodeName> scopeNames(const PassView& view);

}  // namespace kiln::layout
