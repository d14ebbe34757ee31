#pragma once
// A folder of GE graph dumps (DUMP_GE_GRAPH: ge_proto_%08d_graph_<id>_<Stage>.txt, ge.proto.ModelDef in protobuf
// text format, one file per pipeline stage) is a recorded pass history of a real GE compilation. Importing it makes
// one run in Kiln's history with one pass per file, ordered by the counter and named by the stage, so the same
// diffs, inspector and views step through it as through our own runs.
//
// The history diffs by node id, and every file is a separate graph: nodes are matched across files by op name (GE
// names are unique within a graph and stable across its stages). An op whose name and type survive keeps its id;
// its attributes, annotations, inputs and output types are brought up to date, so the diff shows what the stage
// changed.
#include <cstdint>
#include <string>
#include <vector>

namespace kiln {
class HistoryDb;
}  // namespace kiln

namespace kiln::gedump {

struct DumpFile {
  int64_t counter = 0;
  std::string graphId, stage, path;
};

// The ge_proto_* files of `dir` for one graph id (the one with the most files), ordered by counter. Files of other
// graph ids are reported in `skipped`. Throws LoadError when the folder cannot be read or holds no dump.
std::vector<DumpFile> listDumps(const std::string& dir, std::vector<std::string>* skipped = nullptr);

struct ImportResult {
  int64_t runId = 0;
  int passes = 0;  // files after the first (which is the imported graph)
  std::vector<std::string> warnings;
};

// Imports the folder into `db` as one run. Throws LoadError naming the file for a broken dump; the runs already in
// the database are never touched (a failure leaves the new run marked incomplete).
ImportResult importDumps(const std::string& dir, HistoryDb& db);

}  // namespace kiln::gedump
