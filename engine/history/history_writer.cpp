#include "history/history_writer.h"

#include <sqlite3.h>

#include <algorithm>
#include <optional>

#include "history/annotation_changes.h"
#include "history/history_db.h"
#include "history/pass_rows.h"
#include "history/sqlite_handle.h"

namespace kiln {

namespace {
// Rows waiting to be written: bounded, so a slow disk cannot let memory grow with the graph, but by rows rather
// than batches: a run of passes that change nothing must not wait behind the import's batch (a bound of four
// batches made the compile stall for a third of its recording cost).
constexpr size_t kMaxQueuedRows = size_t(1) << 18;

constexpr size_t kCheckpointRows = 2048;

size_t rowCount(const PassRows& r) {
  return 1 + r.nodes.size() + r.values.size() + r.edges.size() + r.closedNodes.size() + r.closedValues.size() +
         r.closedEdges.size() + r.annotationEdits.size() / 4;
}
}  // namespace

// The second connection is opened on the writer's own thread: the few milliseconds that takes (file checks, pragmas)
// overlap the next passes instead of delaying the first. `db` outlives the writer (the recorder's contract).
HistoryWriter::HistoryWriter(const HistoryDb& db) : path_(db.path()) {
  thread_ = std::thread([this, &db] {
    open(db);
    loop();
  });
}

void HistoryWriter::open(const HistoryDb& db) {
  std::string failure;
  try {
    db_ = db.openWriterConnection();
    return;
  } catch (const std::exception& e) {
    failure = e.what();
  }
  std::lock_guard lock(mutex_);
  error_ = failure;  // what was queued meanwhile is dropped, and flush() reports it
  queue_.clear();
  queuedRows_ = 0;
  changed_.notify_all();
}

HistoryWriter::~HistoryWriter() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
  st_.reset();  // statements before their connection
  sqlite3_close_v2(db_);
}

void HistoryWriter::submit(PassRows rows) {
  std::unique_lock lock(mutex_);
  const size_t size = rowCount(rows);
  changed_.wait(lock, [&] { return queuedRows_ == 0 || queuedRows_ + size <= kMaxQueuedRows; });
  if (!error_.empty()) return;  // recording stopped at the first failure
  queuedRows_ += size;
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
    // Everything queued goes in one transaction (a group commit): when the passes outrun the writer, the b-tree
    // pages they share are written to the log once rather than once per pass. Passes still appear in order, and
    // none is committed before all of its rows are.
    std::vector<PassRows> group;
    size_t rows = 0;
    bool finished = false;
    while (!queue_.empty()) {
      rows += rowCount(queue_.front());
      finished |= queue_.front().finish.has_value();
      group.push_back(std::move(queue_.front()));
      queue_.pop_front();
    }
    queuedRows_ = 0;
    busy_ = true;
    changed_.notify_all();  // room in the queue
    lock.unlock();
    std::string failure;
    try {
      write(group);
    } catch (const std::exception& e) {
      failure = e.what();
    }
    group.clear();  // the rows go before the lock is taken again: the compile thread need not wait for that
    // After a run's last batch the caller, waiting in flush(), usually closes the history next, and closing
    // checkpoints (and syncs) again: one checkpoint does. A history kept open is checkpointed at the next run's
    // idle moments or when its WAL reaches wal_autocheckpoint.
    if (failure.empty() && !finished) checkpointWhenIdle(rows);
    lock.lock();
    busy_ = false;
    if (!failure.empty() && error_.empty()) {
      error_ = failure;
      queue_.clear();
      queuedRows_ = 0;
    }
    changed_.notify_all();
  }
}

// Closing the history checkpoints the WAL into the file (and syncs it): on a 2,000-node run that was ~20 ms on the
// compile's critical path. Copying committed pages whenever the thread has nothing queued moves most of that
// work here, beside the passes; small batches wait for more rows so upper b-tree pages are not copied every pass.
void HistoryWriter::checkpointWhenIdle(size_t rowsWritten) {
  rowsSinceCheckpoint_ += rowsWritten;
  if (rowsSinceCheckpoint_ < kCheckpointRows) return;
  {
    std::lock_guard lock(mutex_);
    if (!queue_.empty()) return;
  }
  // PASSIVE never waits for readers; whatever it cannot copy now is copied at the next idle moment or at close.
  sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
  rowsSinceCheckpoint_ = 0;
}

namespace {

// A pass's new rows go in kRowsPerInsert at a time: a statement per row pays its own round trip (step, reset,
// clearing bindings) for every row, and an import or a fusion pass inserts thousands. In isolation 32 rows per INSERT
// took 1.0 µs a row against 1.9; on the llama sample the writer's whole time fell by about a tenth. The rows past
// the last full block take the one-row statement.
constexpr int kRowsPerInsert = 32;

// "INSERT INTO table(columns) VALUES (?, ...), ..." for `rows` rows of `columns` parameters each.
std::string insertSql(std::string_view head, int columns, int rows) {
  std::string one = "(";
  for (int c = 0; c < columns; ++c) one += c ? ",?" : "?";
  one += ')';
  std::string sql(head);
  sql += " VALUES ";
  for (int r = 0; r < rows; ++r) {
    if (r) sql += ',';
    sql += one;
  }
  return sql;
}

constexpr int kNodeColumns = 10, kValueColumns = 15, kEdgeColumns = 5;
constexpr std::string_view kNodeInsert =
    "INSERT INTO nodes(run_id, node_id, first_pass, graph_owner, graph_attr, op_type, domain, name, attrs_json, "
    "annotations_json)";
constexpr std::string_view kValueInsert =
    "INSERT INTO \"values\"(run_id, value_id, first_pass, graph_owner, graph_attr, name, dtype, shape, format, bytes, "
    "producer_node, producer_index, is_input, is_output, is_constant)";
constexpr std::string_view kEdgeInsert =
    "INSERT INTO edges(run_id, consumer_node, consumer_index, first_pass, value_id)";

}  // namespace

// The statements of a batch, prepared once per connection (on the writer's thread, on first use). Row text is bound
// without copying (bindView): the batch outlives each statement's step.
struct HistoryWriter::Statements {
  explicit Statements(sqlite3* db)
      : pass(db,
             "INSERT INTO passes(run_id, seq, stage, name, ms, changed, counters_json, nodes_before, nodes_after, "
             "error) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"),
        node(db, insertSql(kNodeInsert, kNodeColumns, 1)),
        nodes(db, insertSql(kNodeInsert, kNodeColumns, kRowsPerInsert)),
        value(db, insertSql(kValueInsert, kValueColumns, 1)),
        values(db, insertSql(kValueInsert, kValueColumns, kRowsPerInsert)),
        edge(db, insertSql(kEdgeInsert, kEdgeColumns, 1)),
        edges(db, insertSql(kEdgeInsert, kEdgeColumns, kRowsPerInsert)),
        annotations(db,
                    "INSERT INTO annotation_changes(run_id, seq, nodes, changes_json) VALUES (?1, ?2, ?3, ?4)"),
        passRows(db, "INSERT INTO pass_rows(run_id, seq, graph_table, started, ended) VALUES (?1, ?2, ?3, ?4, ?5)") {}
  SqlStatement pass, node, nodes, value, values, edge, edges, annotations, passRows;
};

namespace {

// Writes the pass's pass_rows entry for one table: the keys of the rows it started (none listed for the import)
// and of those it ended. The ended list is the only record of a row's end (schema 7, pass_rows.h): no row of the
// graph tables is rewritten, so a pass costs one insert per new row and one per table it touched.
void listRows(pass_rows::KeyList& started, pass_rows::KeyList& ended, SqlStatement& list, const PassRows& r,
              pass_rows::Table t) {
  if (started.empty() && ended.empty()) return;
  list.bind(1, r.runId).bind(2, r.seq).bind(3, pass_rows::tableName(t)).bindView(4, started.json());
  list.bindView(5, ended.json()).run();
}

// Binds one row's parameters after the first `at` ones (a row's place in a multi-row INSERT).
void bindNode(SqlStatement& q, int at, const PassRows& r, const NodeRow& n) {
  q.bind(at + 1, r.runId)
      .bind(at + 2, n.id)
      .bind(at + 3, r.seq)
      .bind(at + 4, n.graphOwner)
      .bindView(at + 5, n.graphAttr)
      .bindView(at + 6, n.opType)
      .bindView(at + 7, n.domain)
      .bindView(at + 8, n.name)
      .bindView(at + 9, n.attrsJson)
      .bindView(at + 10, n.annotationsJson);
}

void bindValue(SqlStatement& q, int at, const PassRows& r, const ValueRow& v) {
  q.bind(at + 1, r.runId).bind(at + 2, v.id).bind(at + 3, r.seq).bind(at + 4, v.graphOwner);
  q.bindView(at + 5, v.graphAttr).bindView(at + 6, v.name).bindView(at + 7, v.dtype);
  if (v.shape)
    q.bindView(at + 8, *v.shape);
  else
    q.bindNull(at + 8);
  q.bindView(at + 9, v.format)
      .bind(at + 10, v.bytes)
      .bind(at + 11, v.producerNode)
      .bind(at + 12, v.producerIndex)
      .bind(at + 13, v.isInput ? 1 : 0)
      .bind(at + 14, v.isOutput ? 1 : 0)
      .bind(at + 15, v.isConstant ? 1 : 0);
}

void bindEdge(SqlStatement& q, int at, const PassRows& r, const PassRows::Edge& e) {
  q.bind(at + 1, r.runId).bind(at + 2, e.node).bind(at + 3, e.index).bind(at + 4, r.seq).bind(at + 5, e.value);
}

// Inserts `rows` kRowsPerInsert at a time through `many`, the rest one at a time through `one`.
template <typename Row, typename Bind>
void insertRows(const std::vector<Row>& rows, SqlStatement& many, SqlStatement& one, int columns, Bind bindRow) {
  const size_t block = kRowsPerInsert;
  size_t i = 0;
  for (; i + block <= rows.size(); i += block) {
    for (size_t k = 0; k < block; ++k) bindRow(many, static_cast<int>(k) * columns, rows[i + k]);
    many.run();
  }
  for (; i < rows.size(); ++i) {
    bindRow(one, 0, rows[i]);
    one.run();
  }
}

}  // namespace

// One batch, one transaction.
void HistoryWriter::write(const std::vector<PassRows>& group) {
  if (!st_) st_ = std::make_unique<Statements>(db_);
  SqlTransaction tx(db_, SqlTransaction::Kind::Write);
  for (const PassRows& r : group) writeRows(r);
  tx.commit();
}

void HistoryWriter::writeRows(const PassRows& r) {
  Statements& st = *st_;
  if (r.pass) {
    st.pass.bind(1, r.runId)
        .bind(2, r.seq)
        .bindView(3, r.pass->stage)
        .bindView(4, r.pass->name)
        .bind(5, r.pass->ms)
        .bind(6, r.pass->changed ? 1 : 0)
        .bindView(7, r.pass->countersJson)
        .bind(8, r.pass->nodesBefore)
        .bind(9, r.pass->nodesAfter)
        .bindTextOrNull(10, r.pass->error)
        .run();
  }
  {
    pass_rows::KeyList started, ended;
    if (r.seq > 0)
      for (const auto& n : r.nodes) started.add(n->id, r.seq);
    for (const auto& c : r.closedNodes) ended.add(c.id, c.firstPass);
    listRows(started, ended, st.passRows, r, pass_rows::Table::Nodes);
  }
  {
    pass_rows::KeyList started, ended;
    if (r.seq > 0)
      for (const auto& v : r.values) started.add(v->id, r.seq);
    for (const auto& c : r.closedValues) ended.add(c.id, c.firstPass);
    listRows(started, ended, st.passRows, r, pass_rows::Table::Values);
  }
  {
    pass_rows::KeyList started, ended;
    if (r.seq > 0)
      for (const auto& e : r.edges) started.add(e.node, e.index, r.seq);
    for (const auto& c : r.closedEdges) ended.add(c.node, c.index, c.firstPass);
    listRows(started, ended, st.passRows, r, pass_rows::Table::Edges);
  }
  insertRows(r.nodes, st.nodes, st.node, kNodeColumns,
             [&](SqlStatement& q, int at, const auto& row) { bindNode(q, at, r, *row); });
  insertRows(r.values, st.values, st.value, kValueColumns,
             [&](SqlStatement& q, int at, const auto& row) { bindValue(q, at, r, *row); });
  insertRows(r.edges, st.edges, st.edge, kEdgeColumns,
             [&](SqlStatement& q, int at, const PassRows::Edge& e) { bindEdge(q, at, r, e); });
  if (!r.annotationEdits.empty()) {
    // Nodes with a row opened or closed in this pass are left out: a new or re-versioned row holds the node's
    // annotations as the pass left them, and an erased node has none (the recorder already dropped the edits of
    // nodes made and erased within the pass, which have no row at all).
    std::vector<int64_t> withRow;
    withRow.reserve(r.nodes.size() + r.closedNodes.size());
    for (const auto& n : r.nodes) withRow.push_back(n->id);
    for (const auto& c : r.closedNodes) withRow.push_back(c.id);
    std::sort(withRow.begin(), withRow.end());
    int64_t nodes = 0;
    const std::string changes = annotationChangesJson(
        r.annotationEdits, [&](int64_t id) { return std::binary_search(withRow.begin(), withRow.end(), id); },
        nodes);
    if (nodes) {
      st.annotations.bind(1, r.runId).bind(2, r.seq).bind(3, nodes).bindView(4, changes).run();
      annotatedNodes_ += nodes;
    }
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
}

}  // namespace kiln
