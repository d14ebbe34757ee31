#pragma once
// Writes a compile into the history as versioned rows: a PassObserver, so passes never know they are recorded.
// runStarted stores the model, the run and the imported graph (pass 0); afterPass / passFailed store the pass and
// the graph delta it produced, each in ONE transaction (a killed process leaves every committed pass readable). The
// rows are worked out here and written by a HistoryWriter on its own thread and connection, overlapping the next
// passes; runFinished (and flush) wait until everything is committed.
//
// A node whose annotations alone changed keeps its row: the change goes into the pass's annotation_changes
// (annotation_changes.h), so a scheduling pass that annotates every node writes one row, not one per node. The
// changes come from the model's annotation journal (ir/annotation_journal.h), which the recorder attaches to the
// model's id source from runStarted to runFinished; the writer thread packs them.
//
// Cheap by construction: the IR stamps every changed node/value with a model-wide increasing revision, so after a
// pass only the objects whose revision moved past the last recorded one are re-serialised and compared with the
// open row kept in memory; unchanged objects cost a revision compare and a presence stamp.
//
// Not recorded (no column for them): doc strings, graph input/output order, and an initializer's bytes — a pass that
// replaces a constant's data in place without changing its type shows no change (folding creates new values, which
// do show). A subgraph re-attached to another node without touching its nodes keeps its old graph_owner.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "history/history_db.h"
#include "history/history_rows.h"
#include "history/history_writer.h"
#include "passes/pass_manager.h"

namespace kiln {

struct IdSource;

class HistoryRecorder final : public PassObserver {
 public:
  // `modelPath` names the model row (rows are reused for the same path and file size).
  HistoryRecorder(HistoryDb& db, std::string modelPath);
  // A run that never reached runFinished (an exception unwound the compile) is marked 'incomplete'.
  ~HistoryRecorder() override;
  // What the destructor does to the database, without freeing the rows kept in memory: the writer commits what is
  // queued and closes its connection, the model's journal is detached, an unfinished run is marked. A process about
  // to exit calls this and need not free the recorder (cli/exit_soon.h). Idempotent; nothing is recorded after.
  void close();
  HistoryRecorder(const HistoryRecorder&) = delete;
  HistoryRecorder& operator=(const HistoryRecorder&) = delete;

  void runStarted(const Model& model, const Options& options) override;
  void afterPass(const PassRecord& record, const Model& model) override;
  // Stores the pass with its error and the graph as the failing pass left it.
  void passFailed(const PassRecord& record, const Model& model) override;
  void runFinished(const RunSummary& summary, const Model& model) override;

  // runStarted with the options already as JSON (what runStarted calls with Options::toJson()).
  void startRun(const Model& model, const Json& options);

  int64_t runId() const { return runId_; }
  // Waits until every pass recorded so far is committed (runFinished does; a caller may read the run before).
  void flush();
  // Observers must not break a compile, so a write failure (disk full, lock timeout) is kept here and recording
  // stops; callers check it after the run. Empty when everything was written.
  const std::string& error() const { return error_; }

  struct Stats {
    int64_t nodeRows = 0, valueRows = 0, edgeRows = 0;  // rows inserted
    int64_t annotatedNodes = 0;                         // entries in annotation_changes (as of the last flush)
    int64_t rowsClosed = 0;                             // rows listed as ended
    double ms = 0;                                      // time spent inside the observer calls
  };
  const Stats& stats() const { return stats_; }

 private:
  struct OpenNode {
    std::shared_ptr<const NodeRow> row;  // content of the open row (row->span.firstPass = its first pass)
    std::vector<int64_t> inputs;     // value id per input slot, 0 = omitted
    std::vector<int> edgeFirstPass;  // first_pass of the open edge row of each slot
  };

  void recordPass(const PassRecord& record, const Model& model);
  void recordGraph(const Model& model, int seq);
  void insertPassRow(const PassRecord& record);
  void insertNode(const Node& n, int seq);
  std::shared_ptr<const NodeRow> writeNodeRow(NodeRow row);
  // `journalled`: the node's annotation changes are in the journal (same id source); `attrsUnchanged` by revision.
  void updateNode(OpenNode& open, const Node& n, int seq, bool journalled, bool attrsUnchanged);
  void followJournal(const std::shared_ptr<IdSource>& now);
  void closeNode(OpenNode& open);
  void syncEdges(OpenNode& open, const Node& n, int seq);
  void insertValue(const Value& v, int seq);
  std::shared_ptr<const ValueRow> writeValueRow(ValueRow row);
  void submit();  // hands batch_ to the writer thread
  void markIncomplete(const std::string& why) noexcept;
  template <typename Fn>
  void guarded(Fn&& fn) noexcept;

  HistoryDb& db_;
  std::string modelPath_;
  int64_t runId_ = 0;
  int lastSeq_ = -1;
  bool finished_ = false;
  bool closed_ = false;  // close() ran
  bool bindingRecorded_ = false;  // runs.shape_binding written
  std::string error_;
  Stats stats_;

  // Open rows by id, and the revision/id source they were last synchronised at.
  std::unordered_map<int64_t, OpenNode> nodes_;
  std::unordered_map<int64_t, std::shared_ptr<const ValueRow>> values_;
  std::shared_ptr<IdSource> ids_;  // held so a replaced id source cannot be mistaken for the old one
  uint64_t seenRevision_ = 0;
  // Presence stamps by id (ids are dense, drawn from one counter): a node or value absent from the walk whose stamp
  // is not the current generation was removed by the pass.
  std::vector<uint32_t> nodeSeen_, valueSeen_;
  uint32_t generation_ = 0;

  AnnotationJournal journal_;            // filled by the model's nodes between two records
  std::shared_ptr<IdSource> journalOn_;  // the id source journal_ is attached to
  PassRows batch_;                       // the rows of the pass being recorded
  std::unique_ptr<HistoryWriter> writer_;  // writes the batches on its own thread (history_writer.h)
};

}  // namespace kiln
