#pragma once
// Tensor lifetimes over a scheduled graph, as GE's memory assignment sees them: which tensors need device memory,
// how many bytes (GE's size rule), from which step to which, and which of them may share a block.
//
// A step is a node's position in the execution order (the main graph's node list after TopologicalSort; an .om's
// Const and Data ops, which compute nothing, are not steps). A tensor is live from its producer's step to its last
// reader's. Streams run concurrently, so the step order alone does not say that a reader on stream A has finished
// before a later producer on stream B starts: wherever a plan hands a block from one stream to another, an event
// must order the two. MemoryReuseEvents inserts those after planning, as GE inserts its events after memory
// assignment; memory/reuse_handoffs.h finds the hand-overs and checks that they are ordered.
// Fixed tensors never enter the reusable arena: graph inputs and outputs (zero-copy: the caller's buffers) and
// weights (their own weight memory). Ops that only relabel their input's bytes (Reshape, Flatten, Squeeze,
// Unsqueeze, Identity) write nothing: their output shares the input's block, whose lifetime covers both.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/aliasing_ops.h"
#include "memory/memory_plan.h"
#include "util/flat_ptr_map.h"

namespace kiln {
class Graph;
class Node;
class Value;
}  // namespace kiln

namespace kiln::memory {

constexpr int64_t kArenaAlignment = 512;  // offsets in the arena
constexpr int64_t kZeroCopyAlignment = 32;

// GE's tensor size rule: round the byte size up to 32, then add 32.
int64_t geTensorBytes(int64_t bytes);

enum class TensorKind { Arena, GraphInput, GraphOutput, Weight, Unsized };
std::string_view tensorKindName(TensorKind k);  // "arena", "input", "output", "weight", "unsized"

struct TensorLifetime {
  const Value* value = nullptr;
  TensorKind kind = TensorKind::Arena;
  int64_t bytes = 0;    // GE-rounded; 0 when unsized
  int64_t first = 0;    // producer's step (-1 for graph inputs and weights: before the first step)
  int64_t end = 0;      // one past its last reader's step: the first step at which its memory may be reused
  std::vector<int64_t> uses;  // the steps that write or read it (a use inside a subgraph: its owner's), ascending
  int block = -1;       // index into Lifetimes::blocks for arena tensors
};

struct Lifetimes {
  std::vector<const Node*> order;       // the steps
  std::vector<TensorLifetime> tensors;  // every tensor a step reads or writes, in first-seen order
  std::vector<Buffer> blocks;           // what the planner places: one per arena block (id = block index)
  int64_t weightBytes = 0;              // sum over weights (GE-rounded)
  int64_t ioBytes = 0;                  // sum over graph inputs and outputs (GE-rounded)
  int64_t noReuseBytes = 0;             // sum over arena blocks: the arena with reuse disabled (no alignment)
  int unsized = 0;                      // tensors without a static byte size (symbolic dims): not planned
  std::vector<std::string> unsizedSymbols;  // the named dimensions among theirs, sorted: what dim_values can bind

  FlatPtrMap<const Value*, size_t> indexOf;  // into tensors

  const TensorLifetime* find(const Value* v) const;
};

// The main graph's lifetimes in its current node order.
Lifetimes computeLifetimes(const Graph& g);

// The blocks as the arena holds them: offsets are kArenaAlignment-aligned, so a block really occupies its size
// rounded up to that. What MemoryAssignment plans (and its lower_bound counts) and what the memory view draws.
std::vector<Buffer> alignedBlocks(const Lifetimes& life);

}  // namespace kiln::memory
