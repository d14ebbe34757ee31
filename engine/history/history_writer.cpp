#include "history/history_writer.h"

#include <sqlite3.h>

#include "history/history_db.h"
#include "history/sqlite_handle.h"

namespace kiln {

namespace {
constexpr size_t kMaxQueued = 4;  // batches waiting: enough to keep the thread busy, bounded memory
}  // namespace

HistoryWriter::HistoryWriter(const HistoryDb& db) : path_(db.path()), db_(db.openWriterConnection()) {
  thread_ = std::thread([this] { loop(); });
}

HistoryWriter::~HistoryWriter() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
  sqlite3_close_v2(db_);
}

void HistoryWriter::submit(PassRows rows) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return queue_.size() < kMaxQueued; });
  if (!error_.empty()) return;  // recording stopped at the first failure
  queue_.push_back(std::move(rows));
  changed_.notify_all();
}

std::string HistoryWriter::flush() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return queue_.empty() && !busy_; });
  return error_;
}

void HistoryWriter::loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return !queue_.empty() || stopping_; });
    if (queue_.empty()) return;  // stopping, nothing left
    PassRows rows = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    changed_.notify_all();  // room in the queue
    lock.unlock();
    std::string failure;
    try {
      write(rows);
    } catch (const std::exception& e) {
      failure = e.what();
    }
    lock.lock();
    busy_ = false;
    if (!failure.empty() && error_.empty()) {
      error_ = failure;
      queue_.clear();
    }
    changed_.notify_all();
  }
}

// One batch, one transaction. Statements are prepared per batch: a few dozen microseconds against the rows'
// milliseconds, and nothing outlives the connection's thread.
void HistoryWriter::write(const PassRows& r) {
  SqlTransaction tx(db_, SqlTransaction::Kind::Write);
  if (r.pass) {
    SqlStatement q(db_,
                   "INSERT INTO passes(run_id, seq, stage, name, ms, changed, counters_json, nodes_before, "
                   "nodes_after, error) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
    q.bind(1, r.runId)
        .bind(2, r.seq)
        .bind(3, r.pass->stage)
        .bind(4, r.pass->name)
        .bind(5, r.pass->ms)
        .bind(6, r.pass->changed ? 1 : 0)
        .bind(7, r.pass->countersJson)
        .bind(8, r.pass->nodesBefore)
        .bind(9, r.pass->nodesAfter)
        .bindTextOrNull(10, r.pass->error)
        .run();
  }
  if (!r.closedNodes.empty()) {
    SqlStatement q(db_, "UPDATE nodes SET last_pass = ?4 WHERE run_id = ?1 AND node_id = ?2 AND first_pass = ?3");
    for (const auto& c : r.closedNodes) q.bind(1, r.runId).bind(2, c.id).bind(3, c.firstPass).bind(4, r.seq).run();
  }
  if (!r.closedValues.empty()) {
    SqlStatement q(db_,
                   "UPDATE \"values\" SET last_pass = ?4 WHERE run_id = ?1 AND value_id = ?2 AND first_pass = ?3");
    for (const auto& c : r.closedValues) q.bind(1, r.runId).bind(2, c.id).bind(3, c.firstPass).bind(4, r.seq).run();
  }
  if (!r.closedEdges.empty()) {
    SqlStatement q(db_,
                   "UPDATE edges SET last_pass = ?5 WHERE run_id = ?1 AND consumer_node = ?2 AND consumer_index = ?3 "
                   "AND first_pass = ?4");
    for (const auto& c : r.closedEdges)
      q.bind(1, r.runId).bind(2, c.node).bind(3, c.index).bind(4, c.firstPass).bind(5, r.seq).run();
  }
  if (!r.nodes.empty()) {
    SqlStatement q(db_,
                   "INSERT INTO nodes(run_id, node_id, first_pass, graph_owner, graph_attr, op_type, domain, name, "
                   "attrs_json, annotations_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
    for (const NodeRow& n : r.nodes)
      q.bind(1, r.runId)
          .bind(2, n.id)
          .bind(3, r.seq)
          .bind(4, n.graphOwner)
          .bind(5, n.graphAttr)
          .bind(6, n.opType)
          .bind(7, n.domain)
          .bind(8, n.name)
          .bind(9, n.attrsJson)
          .bind(10, n.annotationsJson)
          .run();
  }
  if (!r.values.empty()) {
    SqlStatement q(db_,
                   "INSERT INTO \"values\"(run_id, value_id, first_pass, graph_owner, graph_attr, name, dtype, shape, "
                   "format, bytes, producer_node, producer_index, is_input, is_output, is_constant) "
                   "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)");
    for (const ValueRow& v : r.values) {
      q.bind(1, r.runId).bind(2, v.id).bind(3, r.seq).bind(4, v.graphOwner).bind(5, v.graphAttr).bind(6, v.name);
      q.bind(7, v.dtype)
          .bind(8, v.shape)
          .bind(9, v.format)
          .bind(10, v.bytes)
          .bind(11, v.producerNode)
          .bind(12, v.producerIndex)
          .bind(13, v.isInput ? 1 : 0)
          .bind(14, v.isOutput ? 1 : 0)
          .bind(15, v.isConstant ? 1 : 0)
          .run();
    }
  }
  if (!r.edges.empty()) {
    SqlStatement q(db_,
                   "INSERT INTO edges(run_id, consumer_node, consumer_index, first_pass, value_id) "
                   "VALUES (?1, ?2, ?3, ?4, ?5)");
    for (const auto& e : r.edges) q.bind(1, r.runId).bind(2, e.node).bind(3, e.index).bind(4, r.seq).bind(5, e.value).run();
  }
  if (r.shapeBindingJson) {
    SqlStatement q(db_, "UPDATE runs SET shape_binding = ?2 WHERE id = ?1");
    q.bind(1, r.runId).bind(2, *r.shapeBindingJson).run();
  }
  if (r.finish) {
    SqlStatement q(db_,
                   "UPDATE runs SET status = ?2, finished_at = ?3, total_ms = ?4, nodes_before = ?5, nodes_after = ?6, "
                   "error = ?7 WHERE id = ?1");
    q.bind(1, r.runId)
        .bind(2, r.finish->status)
        .bind(3, r.finish->finishedAt)
        .bind(4, r.finish->totalMs)
        .bind(5, r.finish->nodesBefore)
        .bind(6, r.finish->nodesAfter)
        .bindTextOrNull(7, r.finish->error)
        .run();
  }
  tx.commit();
}

}  // namespace kiln
