#pragma once
// Structure found in the graph itself, for exports without name scopes (ORT-optimised files, TF/Keras graphs,
// numbered or missing names): repeated blocks — transformer layers, residual or inception blocks — found as tandem
// repeats of structural signatures along the nodes in graph order. Exporters emit a model layer by layer, so layer
// k's nodes follow layer k-1's in the same op order; each node's signature hashes its op type with its producers'
// op types, candidate periods come from the distances between recurring signatures, and a period wins by how many
// nodes its run of repeats covers (a block differing in a node or two still matches: up to 1 in 20 may differ).
// Where a layer starts is where the fewest values cross from one block to the next (the residual stream).
// Work is bounded: a dozen candidate periods per run, each one pass over it.
#include <cstdint>
#include <string>
#include <vector>

namespace kiln::layout {

// One node of a sequence to search: its op type and the positions (in the same sequence) of its producers.
struct SequenceNode {
  std::string opType;
  std::vector<int> producers;  // positions earlier in the sequence; producers outside it are left out
};

struct RepeatRun {
  std::vector<size_t> bounds;  // block i is [bounds[i], bounds[i + 1]); empty when nothing repeats
  size_t period = 0;           // nodes of a typical block
  size_t typical = 0;          // where one typical block starts (describe it from there)
  size_t blocks() const { return bounds.empty() ? 0 : bounds.size() - 1; }
  size_t first() const { return bounds.empty() ? 0 : bounds.front(); }
  size_t end() const { return bounds.empty() ? 0 : bounds.back(); }
  // The block (0-based) holding sequence position `pos`, which must be in [first(), end()).
  size_t blockOf(size_t pos) const;
};

// The repeat covering the most nodes of `seq` (blocks at its ends may be up to a tenth longer or a fifth shorter:
// a layer with a node more, a first layer whose preamble the exporter hoisted), or no blocks when none covers at least `minCoverage` of it with
// blocks of at least `minPeriod` nodes.
RepeatRun findRepeat(const std::vector<SequenceNode>& seq, size_t minPeriod = 4, double minCoverage = 0.15);

// Where to cut `seq` into pieces of about `target` nodes (within a quarter of it): at the positions the fewest
// values cross, so a piece of a transformer layer is its attention or its MLP, not half of each. Positions of the
// first node of each piece after the first; empty when the sequence fits one piece.
std::vector<size_t> quietCuts(const std::vector<SequenceNode>& seq, size_t target);

// What a block holds, as a reader would name it: "Attention + MLP", "Conv ×3 + residual", "MatMul ×2, Add" —
// and whether it is a transformer layer (it has attention), which the group label says ("layer" / "block").
struct BlockDescription {
  std::string text;
  bool attention = false;
};
BlockDescription describeBlock(const std::vector<std::string>& opTypes);

}  // namespace kiln::layout
