#pragma once
// What the memory view draws for a Stage-3-compiled graph: one block per tensor planned into the arena (its
// lifetime in steps — positions in the execution order —, its offset from the `mem.out` annotation MemoryAssignment
// wrote on its producer, its bytes), the arena size, the lower bound, the live-bytes curve, its peak and the tensors
// alive there. Lifetimes come from memory/lifetimes (the same computation MemoryAssignment planned with), offsets
// only from the recorded annotations, so the chart shows the plan the compiler made, not a new one.
#include <cstdint>
#include <string>
#include <vector>

#include "util/json.h"

namespace kiln {

class Graph;

struct MemoryChartBlock {
  int64_t valueId = 0;
  std::string name;
  int64_t producerId = 0;
  std::string producerOp;  // qualified op type ("Conv", "kiln:FusedMatMul")
  int stream = -1;         // the producer's `stream` annotation; -1 when it has none
  int64_t first = 0;       // first step the tensor is live
  int64_t end = 0;         // first step its memory may be reused (end > first)
  int64_t offset = 0;      // in the arena
  int64_t bytes = 0;       // GE's size rule (what the planner reserved, before the 512-byte alignment)
  // Tensors one arena block holds: an aliasing op's output (Reshape...) shares its input's block, so the two overlap.
  int arenaBlock = -1;
  // Tensors placed at the same offset: the memory handed from one tensor to the next over time.
  int reuseBlock = -1;
};

struct MemoryChart {
  std::vector<MemoryChartBlock> blocks;  // in the order their producers run
  std::vector<int64_t> stepNodes;        // node id of each step (the execution order)
  int64_t arenaBytes = 0;   // max(offset + aligned block size): MemoryAssignment's memory_size
  int64_t lowerBound = 0;   // peak of the live curve: MemoryAssignment's lower_bound
  std::vector<int64_t> live;  // bytes live during each step (aligned block sizes, each arena block counted once)
  // Measured beside the plan: the static memory GE reported per op (msprof's static_op_mem.csv, imported with the
  // profile) live at each of its node indices, over the same step axis; empty when the run has none.
  std::vector<int64_t> measuredLive;
  int64_t measuredPeak = 0;
  int64_t peakStep = -1;      // first step where live == lowerBound
  std::vector<size_t> peakBlocks;  // indexes into blocks alive at peakStep, largest first
  int reuseBlocks = 0;
  int unplaced = 0;  // arena tensors whose producer's `mem.out` gives no offset (not planned, or odd annotations)
  int unsized = 0;   // tensors with symbolic shapes: no static size, so never planned (lifetimes' `unsized`)
  std::vector<std::string> unsizedSymbols;  // their named dimensions (what the dim_values option binds)
  bool planned = false;  // false: no node carries `mem.out` (the compile stopped before MemoryAssignment)
  // "" for the plan the compiler recorded; else the planner the same lifetimes were planned again with, and how
  // (best_of's winning ordering, "optimal" / "budget exhausted" for exact).
  std::string replannedWith, planDetail;
};

// `replanWith` empty: the plan MemoryAssignment recorded (`mem.out`). A planner name ("none", "greedy_size",
// "best_of", "exact"): the same lifetimes planned again with it, to see what another planner would have made of
// this graph (throws std::invalid_argument for an unknown name).
MemoryChart buildMemoryChart(const Graph& g, const std::string& replanWith = {});

// The plan as a table, one row per tensor with a header: value_id, name, producer_id, producer_op, stream,
// first_step, end_step, offset, bytes, arena_block, reuse_block, at_peak (1 when alive at the peak step). Text
// fields are quoted when they hold a comma, a quote or a line break.
std::string memoryChartCsv(const MemoryChart& chart);
// {"arena_bytes", "lower_bound_bytes", "peak_step", "reuse_blocks", "unplaced", "unsized", "unsized_symbols", "steps",
//  "live": [bytes per step], "peak_tensors": [value ids, largest first], "tensors": [{the CSV's columns}]}
Json memoryChartJson(const MemoryChart& chart);

}  // namespace kiln
