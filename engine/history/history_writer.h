#pragma once
// The history recorder's writing half, on a thread and an SQLite connection of its own: the compile thread works out
// what a pass changed (in memory, from revisions) and hands the rows over as one PassRows batch; this thread writes
// the batches while the next passes run. Recording then costs the compile little more than working out the rows,
// and the SQLite work overlaps the passes.
//
// Ordering and durability are the recorder's as before: batches are written in the order submitted, each pass whole
// in one transaction, so a reader sees passes appear in order and a killed process loses no committed pass (a pass
// not yet written when the process dies was never committed). Batches that queued up while a transaction was being
// written share the next one (a group commit). flush() waits until everything submitted is committed; the
// recorder flushes when the run finishes and before it goes. A write failure (disk full, a lock held too long) is
// kept, later batches are dropped, and flush() returns the message.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "history/history_rows.h"
#include "ir/annotation_journal.h"

struct sqlite3;

namespace kiln {

class HistoryDb;

// What one pass wrote: its passes row and the graph rows it opened and closed. Every close ends its row at `seq`.
struct PassRows {
  int64_t runId = 0;
  int seq = 0;
  struct PassRow {
    std::string stage, name, countersJson, error;
    double ms = 0;
    bool changed = false;
    int64_t nodesBefore = 0, nodesAfter = 0;
  };
  std::optional<PassRow> pass;
  // Opened at seq; shared with the recorder's copy of the open rows (never changed once made).
  std::vector<std::shared_ptr<const NodeRow>> nodes;
  std::vector<std::shared_ptr<const ValueRow>> values;
  struct Edge {
    int64_t node = 0, index = 0, value = 0;
  };
  std::vector<Edge> edges;
  struct Closed {
    int64_t id = 0;
    int firstPass = 0;
  };
  std::vector<Closed> closedNodes, closedValues;
  struct ClosedEdge {
    int64_t node = 0, index = 0;
    int firstPass = 0;
  };
  std::vector<ClosedEdge> closedEdges;
  // The annotation changes made during the pass, as the journal logged them; the writer packs those of nodes whose
  // row stays into the pass's annotation_changes (annotation_changes.h), off the compile's thread.
  AnnotationJournal annotationEdits;
  std::optional<std::string> shapeBindingJson;  // runs.shape_binding, written once
  // runs: status, finished_at, total_ms, nodes_before, nodes_after, error (the run's last batch).
  struct Finish {
    std::string status, finishedAt, error;
    double totalMs = 0;
    int64_t nodesBefore = 0, nodesAfter = 0;
  };
  std::optional<Finish> finish;
};

class HistoryWriter {
 public:
  // Starts the thread, which opens a second connection to `db`'s file (already validated and migrated by `db`).
  explicit HistoryWriter(const HistoryDb& db);
  // Writes what is queued, then stops.
  ~HistoryWriter();
  HistoryWriter(const HistoryWriter&) = delete;
  HistoryWriter& operator=(const HistoryWriter&) = delete;

  // Queues a batch; waits while many rows are already queued, so a slow disk cannot let memory grow without bound.
  void submit(PassRows rows);
  // Waits until every submitted batch is committed (or dropped after a failure); the first failure, "" when none.
  std::string flush();
  // Nodes written to annotation_changes so far (all passes); exact once flush() returned.
  int64_t annotatedNodes() const { return annotatedNodes_; }

 private:
  void open(const HistoryDb& db);  // on the thread, before loop(); a failure becomes the writer's error
  void loop();
  void write(const std::vector<PassRows>& group);  // one transaction
  void writeRows(const PassRows& rows);
  void checkpointWhenIdle(size_t rowsWritten);

  std::string path_;
  sqlite3* db_ = nullptr;
  struct Statements;
  std::unique_ptr<Statements> st_;  // prepared on the writer's thread, finalised before db_ closes
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<PassRows> queue_;
  size_t queuedRows_ = 0;  // rows in queue_ (history_writer.cpp: rowCount)
  size_t rowsSinceCheckpoint_ = 0;  // the writer thread's own
  bool busy_ = false, stopping_ = false;
  std::atomic<int64_t> annotatedNodes_{0};
  std::string error_;
  std::thread thread_;  // last: started once everything above exists
};

}  // namespace kiln
