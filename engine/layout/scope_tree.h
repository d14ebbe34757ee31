#pragma once
// Hierarchical grouping of a graph's nodes, the way Google Model Explorer groups exports by name scope:
// "/encoder/layer.3/attention/MatMul" sits in group encoder ▸ layer.3 ▸ attention. Large graphs stay navigable
// because only open groups are laid out. Rules that keep the tree useful on real exports:
//  - a chain of groups with one child group and no nodes of their own is merged ("encoder/layer.3");
//  - a group with more than `maxItems` direct items (no scopes at all — ORT-optimised, TF, numbered or unnamed
//    exports — or a flat scope) has its runs of loose nodes searched for repeated blocks (layout/repeat_blocks):
//    numbered groups named after what they hold ("layer 3 · Attention + MLP, 187 nodes"), and inside a block the
//    sub-blocks that repeat;
//  - what is left too long is wrapped into chunk groups ("nodes 1–60") in graph order, the last resort;
//  - the nodes of a control-flow body (If's branches, Loop's and Scan's body) form a body group placed right after
//    the node that owns it ("then_branch of If 'check'"), nested bodies inside theirs; a body is grouped like any
//    other group when it is large.
// Scopes, when present, win.
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace kiln::layout {

struct ScopeGroup {
  std::string path;   // "encoder/layer.3" (merged chains joined with '/'); "" for the root
  std::string label;  // what the view shows: the last scope component(s), or "nodes 1–100" for a chunk
  int parent = -1;
  enum class Kind { Scope, Repeat, Chunk, Body } kind = Kind::Scope;
  bool chunk = false;      // kind == Chunk
  int instances = 0;       // Repeat: how many blocks this one is an instance of (1-based number in `label`)
  std::string description;  // Repeat: what the block holds ("Attention + MLP"); Body: the attribute ("then_branch")
  int64_t owner = 0;         // Body: the id of the node whose subgraph this is
  // Direct items in graph order: child groups (index into groups) and nodes (ids), interleaved as they appear.
  struct Item {
    bool isGroup;
    int64_t id;  // group index or node id
  };
  std::vector<Item> items;
  int64_t totalNodes = 0;  // nodes in this group and all nested groups
};

class ScopeTree {
 public:
  struct NodeName {
    int64_t id;
    std::string name;
    std::string opType = "";           // for finding repeated blocks when there are no scopes
    std::vector<int64_t> inputs = {};  // producer node ids; -1 for a graph input (data, not a constant)
    int64_t owner = 0;                 // in a control-flow body: the node holding it (0 in the main graph)
    std::string body = "";             // that node's attribute holding the body ("then_branch", "body")
  };
  // `nodes` in graph (topological) order; a body's nodes in their body's order, anywhere after their owner.
  static ScopeTree build(const std::vector<NodeName>& nodes, size_t maxItems = 120);

  const std::vector<ScopeGroup>& groups() const { return groups_; }
  const ScopeGroup& group(int g) const { return groups_.at(static_cast<size_t>(g)); }
  // Innermost group holding the node (0 = root); -1 for an unknown id.
  int groupOf(int64_t nodeId) const;
  // Groups from the root's child down to `g` (empty for the root).
  std::vector<int> ancestry(int g) const;
  // True when `g` is `ancestor` or nested inside it.
  bool within(int g, int ancestor) const;

 private:
  std::vector<ScopeGroup> groups_;
  std::unordered_map<int64_t, int> nodeGroup_;
};

// "scope", "repeat", "chunk", "body"
const char* groupKindName(ScopeGroup::Kind k);

// Control-flow ops, whose bodies the views draw (If, Loop, Scan, SequenceMap of the default domain; GE's calls and
// control flow: PartitionedCall, If, While, Case...; `qualifiedType` as Node::qualifiedType gives it). Other graph-valued attributes — the original nodes a fused kernel holds — are
// not drawn as bodies: the fused-subgraph view expands those.
bool isControlFlowOp(const std::string& qualifiedType);

// The scope components of a node name: "/a/b/MatMul" -> {"a","b"}; names without '/' have none.
std::vector<std::string> scopeOf(const std::string& nodeName);

}  // namespace kiln::layout
