#pragma once
// ATC's fusion_result.json, written beside the model by every ATC run: per graph, which of GE's graph fusion passes
// and UB (buffer) fusion passes matched and how often they took effect. Four layouts exist across CANN releases
// (reference: ascend-artifacts.md), all read:
//   - "concatenated": old CANN, objects {graphId, sessionId, graph_fusion, ub_fusion} written back to back ("}{"),
//     which is not one JSON document;
//   - "array": a JSON array of such objects, each with "session_and_graph_id" ("0_11");
//   - "single": one such object;
//   - "keyed": CANN 8 and later, one object keyed "session_and_graph_id_<s>_<g>", each value holding the two maps.
// Counts are strings ("12") in every release seen; numbers are read too. A pass whose counts are not counts is
// skipped and said in `warnings`; keys Kiln does not know are listed there once.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::atc {

inline constexpr uintmax_t kMaxFusionResultBytes = uintmax_t{64} << 20;

struct FusionPassCount {
  std::string graph;  // "<session>_<graph>" where the file gives both, the graph id alone, or "" when neither
  std::string kind;   // "graph" (graph_fusion) or "ub" (ub_fusion)
  std::string pass;
  int64_t match = 0, effect = 0;
};

struct FusionResult {
  std::string layout;  // "concatenated", "array", "single" or "keyed"
  std::vector<FusionPassCount> passes;  // in file order
  std::vector<std::string> warnings;
};

// Throws LoadError(displayName, ...) when the text is none of the four layouts.
FusionResult parseFusionResult(std::string_view text, const std::string& displayName);
FusionResult readFusionResult(const std::string& path);

// A quick look at a JSON text's first bytes: does it look like a fusion_result (before parsing it as one)?
bool looksLikeFusionResult(std::string_view head);

}  // namespace kiln::atc
