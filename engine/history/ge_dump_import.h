#pragma once
// GE's graph dumps (DUMP_GE_GRAPH) are a recorded pass history of a real GE compilation. Importing a folder of them
// (or any set of dump files: io/gedump/dump_files.h sorts them into compilations) makes one run per compilation in
// Kiln's history, one pass per dump after the first, ordered by GE's index and named by the stage, so the same
// diffs, inspector and views step through GE's compile as through Kiln's own.
//
// The history diffs by node id, and every file is a separate graph: ops are matched across files by name (GE names
// are unique within a graph and stable across its stages). An op whose name and type survive keeps its id; its
// attributes, annotations, inputs, output types and subgraphs are brought up to date, so the diff shows what the
// stage changed.
//
// ATC's fusion_result.json (given, or found beside the dumps) is attached to the run of the graph it names as two
// passes that change nothing, "ATC:graph_fusion" and "ATC:ub_fusion", whose counters are each fusion pass's
// effect_times (what took effect, as Kiln's GraphFusion/UBFusion counters count rules) and "<pass>.matched" its
// match_times. The run's model path is the last stage's file, so the views can open GE's final graph (and its plan,
// when that is a Build-stage dump) without compiling anything.
#include <cstdint>
#include <string>
#include <vector>

namespace kiln {
class HistoryDb;
}  // namespace kiln

namespace kiln::atc {
struct FusionResult;
}  // namespace kiln::atc

namespace kiln::gedump {

struct ImportedRun {
  int64_t runId = 0;
  std::string label;       // "graph 11"
  int stages = 0;          // files imported (the first is pass 0)
  std::string lastFile;    // the run's model path
  int fusionPasses = 0;    // fusion_result entries attached
};

struct ImportResult {
  std::vector<ImportedRun> runs;
  std::vector<std::string> warnings;
};

// The pass names the attached fusion report gets, by kind.
inline constexpr const char* kAtcGraphFusionPass = "ATC:graph_fusion";
inline constexpr const char* kAtcUbFusionPass = "ATC:ub_fusion";

// `paths`: folders and/or dump files; `fusionResult`: a fusion_result.json to attach ("" = look beside the dumps).
// Throws LoadError naming the file for a broken dump; the runs already in the database are never touched (a
// failure leaves the run being imported marked incomplete, and the runs imported before it stand).
ImportResult importDumps(const std::vector<std::string>& paths, HistoryDb& db, const std::string& fusionResult = {});

// The entries of `report` that belong to a graph of id `graphId` ("" when the dumps give none): those whose graph
// is <graphId> or <session>_<graphId>; when the dumps give no id and the report holds one graph only, that one.
std::vector<size_t> fusionEntriesFor(const atc::FusionResult& report, const std::string& graphId);

}  // namespace kiln::gedump
