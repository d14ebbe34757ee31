#pragma once
// Queries over a history for the views, reports and the CLI: runs, their passes, the graph after any pass and
// structural diffs between any two passes. Plain structs, no Qt. Every call reads inside one read transaction, so
// it sees a consistent state while a writer keeps committing passes (WAL).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "history/history_db.h"
#include "history/history_rows.h"
#include "ir/graph.h"

namespace kiln {

struct RunInfo {
  int64_t id = 0;
  int64_t modelId = 0;
  std::string modelPath, modelName;
  std::optional<int64_t> modelBytes;
  std::string status;  // running | ok | failed | stopped | incomplete
  std::string startedAt, finishedAt;  // ISO 8601 UTC; finishedAt empty while running
  std::optional<double> totalMs;
  std::optional<int64_t> nodesBefore, nodesAfter;
  std::string error;
  std::string kilnVersion;
  std::string optionsJson;     // every option with its value (Options::toJson())
  std::string shapeBindingJson;  // the shape binding it compiled at (ShapeBinding::toJson()); "" before schema 4
  std::string optionsSummary;  // headline options and those differing between the listed runs: "oo_level=O1 ..."
  std::string optionsDiff;      // only what tells this run from the others listed with it: "oo_level=O1" ("" = none);
                                // an imported run: "GE dumps: graph 11"
  std::string optionsHeadline;  // the headline options' values alone: "Ascend910A · force_fp16 · O3"
  int passCount = 0;           // passes recorded, the imported graph (pass 0) included
  int lastPass = -1;           // highest pass number recorded
  int64_t writerPid = 0;
  std::string writerHost;
};

// A run imported from files GE wrote (history/ge_dump_import.h): its options say where it came from ("source")
// instead of holding Kiln's option set, and its passes are GE's stages.
bool isImportedRun(const RunInfo& run);

// Fills optionsSummary / optionsDiff / optionsHeadline of runs listed together: what tells each from the others
// (listRuns does it for the whole history; Compare Runs for just its two runs).
void summariseOptions(std::vector<RunInfo>& runs);

struct PassInfo {
  int seq = 0;        // 0 is the imported graph
  std::string stage;  // "import", "prepare", "optimize", "compile"
  std::string name;
  double ms = 0;
  bool changed = false;
  std::map<std::string, int64_t> counters;
  std::optional<int64_t> nodesBefore, nodesAfter;
  std::string error;  // set when the pass failed
  // Node rows this pass opened / closed (a changed node counts in both): how much it touched.
  int64_t nodeRowsStarted = 0, nodeRowsEnded = 0;
  // Nodes whose annotations alone this pass changed (their rows stay; annotation_changes.h).
  int64_t nodesAnnotated = 0;
};

// The graph of a run after one pass: every row valid at that pass. Sorted by id (edges by consumer, input index).
struct GraphSnapshot {
  int64_t runId = 0;
  int pass = 0;
  std::vector<NodeRow> nodes;
  std::vector<ValueRow> values;
  std::vector<EdgeRow> edges;
  const NodeRow* node(int64_t id) const;    // null when absent
  const ValueRow* value(int64_t id) const;  // null when absent
};

struct NodeChange {
  NodeRow before, after;
  bool opType = false, domain = false, name = false, graph = false;
  bool inputs = false;   // an input edge was added, removed or rewired
  bool outputs = false;  // a value this node produces appeared, went or moved
  std::vector<std::string> attrs;        // attribute names added, removed or with a different value
  std::vector<std::string> annotations;  // annotation keys added, removed or with a different value
  // "op_type", "domain", "name", "graph", "attr:NAME", "annotation:KEY", "inputs", "outputs".
  std::vector<std::string> fields() const;
};

struct ValueChange {
  ValueRow before, after;
  // "name", "dtype", "shape", "format", "bytes", "producer", "is_input", "is_output", "is_constant", "graph".
  std::vector<std::string> fields() const;
  bool typeChanged() const;  // dtype, shape or format differ
};

// What changed from pass `fromPass` to pass `toPass` (from < to normally; a reversed pair gives the inverse).
// Objects are matched by their stable ids; rows that changed and changed back count as unchanged.
struct GraphDiff {
  int64_t runId = 0;
  int fromPass = 0, toPass = 0;
  std::vector<NodeRow> addedNodes, removedNodes;
  std::vector<NodeChange> changedNodes;
  std::vector<ValueRow> addedValues, removedValues;
  std::vector<ValueChange> changedValues;
  std::vector<EdgeRow> addedEdges, removedEdges;
  bool empty() const;
};

// The graph at d.fromPass, rebuilt from the graph at d.toPass and the diff between them: what graphAt(fromPass)
// reads, without reading every row a second time (a 50k-node pass view read both graphs in full). Rows the two
// passes share are the later graph's rows.
GraphSnapshot graphBefore(const GraphSnapshot& after, const GraphDiff& d);

// A live graph (its subgraphs included) as the rows the history would record for it, sorted as graphAt sorts
// them: what the views and the Python API read, whether the graph came from a file or from a history.
GraphSnapshot snapshotOf(const Graph& g);

class HistoryReader {
 public:
  explicit HistoryReader(const HistoryDb& db) : db_(db) {}

  // Every run, oldest first.
  std::vector<RunInfo> listRuns() const;
  // Throws HistoryError("no run N in FILE") for an unknown id.
  RunInfo run(int64_t runId) const;
  std::vector<PassInfo> passes(int64_t runId) const;
  // Throws HistoryError for an unknown run or a pass that run did not record.
  GraphSnapshot graphAt(int64_t runId, int pass) const;
  // What pass `pass` changed relative to the pass recorded before it (pass 0: everything is added, fromPass -1).
  GraphDiff diff(int64_t runId, int pass) const;
  GraphDiff diff(int64_t runId, int fromPass, int toPass) const;
  // diff(later.runId, fromPass, later.pass) given the later graph (from graphAt): the rows it already holds are not
  // read again, only those the later pass no longer has (the pass view's read of a 50k-node pass, cut by a third).
  GraphDiff diff(const GraphSnapshot& later, int fromPass) const;
  // Every version of every node whose annotations record a fusion ("fusion.rule"), by node id then first pass: the
  // fused nodes of a run, with the pass that created each (its first row).
  std::vector<NodeRow> fusedNodeRows(int64_t runId) const;
  // The largest node id of the imported graph (pass 0): ids above it are nodes the passes made (ids are never
  // reused, so this tells a node's provenance). 0 for a run without nodes.
  int64_t importedMaxNodeId(int64_t runId) const;

 private:
  const HistoryDb& db_;
  void requirePass(int64_t runId, int pass) const;
  // `later`, when given, is the graph at b: the rows started in (a, b] are taken from it.
  GraphDiff diffForward(int64_t runId, int a, int b, const GraphSnapshot* later = nullptr) const;
};

}  // namespace kiln
