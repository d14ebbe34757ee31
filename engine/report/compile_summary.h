#pragma once
// What a compile produced, in the numbers users compare between option sets: fusions by rule, TransData nodes,
// streams and events, and (when the run reached Stage 3) the arena, its lower bound, memory without reuse, weights
// and the device tasks. `kiln compile` prints it after the pass table and adds it to its JSON.
#include <cstdint>
#include <map>
#include <string>

#include "util/json.h"

namespace kiln {

struct Model;
struct RunSummary;

struct CompileSummary {
  // rule -> times it fired (graph fusion and UB fusion). For a graph GE compiled: ATC's report (ATC:* passes of an
  // imported run) where there is one, else GE's own fused ops by the pass that made them (pass_name).
  std::map<std::string, int64_t> fused;
  bool byGe = false;                     // GE compiled the graph (an .om, an imported GE run)
  // The compiled graph's ops by type in GE's names (report/ge_name_map.h), the graph's own Data / Const / NetOutput
  // left out: Kiln's compile and GE's count alike.
  std::map<std::string, int64_t> ops;
  int64_t transdata = 0;                 // layout conversions left in the graph (incl. fused TransData+Cast)
  int64_t streams = 0, events = 0;
  bool built = false;  // the run reached MemoryAssignment and TaskGeneration: the numbers below are set
  int64_t arenaBytes = 0, lowerBoundBytes = 0, noReuseBytes = 0, weightBytes = 0, unsizedTensors = 0;
  // The graph's inputs and outputs (zero-copy, outside the arena): a KV cache exported as inputs and outputs is here.
  int64_t ioBytes = 0;
  int64_t tasks = 0;  // -1: not recorded (a GE graph dump or om JSON holds no task list)
};

CompileSummary summarizeCompile(const Model& compiled, const RunSummary& run);
// {"fused": {...}, "ops": {...}, "by_ge": B, "transdata": N, "streams": N, "events": N} and, when built, "arena_bytes", "lower_bound_bytes",
// "no_reuse_bytes", "weight_bytes", "io_bytes", "unsized_tensors", "tasks"
Json compileSummaryToJson(const CompileSummary& s);
// The inverse, for untrusted JSON (a baseline or a shard's summary.json): throws std::invalid_argument naming the
// field that is missing a type or range. `built` is true when "arena_bytes" is present.
CompileSummary compileSummaryFromJson(const Json& j);
// "fused: LayerNormFusion 25, ...; transdata 3; streams 9; events 53"
std::string compileSummaryLine(const CompileSummary& s);

}  // namespace kiln
