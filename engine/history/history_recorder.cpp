#include "history/history_recorder.h"

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>

#include "ir/model.h"
#include "options/options.h"

#ifndef KILN_VERSION
#define KILN_VERSION "unknown"
#endif

namespace kiln {

namespace {

// ISO 8601 UTC with milliseconds: sorts as text and reads in the sqlite3 shell.
std::string nowIso() {
  using namespace std::chrono;
  const auto now = system_clock::now();
  const std::time_t secs = system_clock::to_time_t(now);
  const auto ms = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[80];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
  return buf;
}

const char* statusText(RunStatus s) {
  switch (s) {
    case RunStatus::Ok: return "ok";
    case RunStatus::Failed: return "failed";
    case RunStatus::Stopped: return "stopped";
  }
  return "failed";
}

std::string countersJson(const std::map<std::string, int64_t>& counters) {
  Json j = Json::object();
  for (const auto& [k, v] : counters) j.set(k, v);
  return j.dump();
}

std::string hostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return {};
  return buf;
}

// Marks id as present in this generation, growing the stamp table when the id source handed out new ids.
void stamp(std::vector<uint32_t>& seen, int64_t id, uint32_t generation) {
  const auto i = static_cast<size_t>(id);
  if (i >= seen.size()) seen.resize(i + i / 2 + 64, 0);
  seen[i] = generation;
}

bool stamped(const std::vector<uint32_t>& seen, int64_t id, uint32_t generation) {
  const auto i = static_cast<size_t>(id);
  return i < seen.size() && seen[i] == generation;
}

}  // namespace

HistoryRecorder::HistoryRecorder(HistoryDb& db, std::string modelPath) : db_(db), modelPath_(std::move(modelPath)) {}

HistoryRecorder::~HistoryRecorder() {
  if (runId_ && !finished_) markIncomplete(error_.empty() ? "recording stopped before the run finished" : error_);
}

// Observer calls never throw into the PassManager: the first failure is kept and recording stops.
template <typename Fn>
void HistoryRecorder::guarded(Fn&& fn) noexcept {
  if (!error_.empty()) return;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    fn();
  } catch (const std::exception& e) {
    error_ = std::string("history: ") + e.what();
  }
  stats_.ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

void HistoryRecorder::prepareStatements() {
  insertPass_ = db_.prepare(
      "INSERT INTO passes(run_id, seq, stage, name, ms, changed, counters_json, nodes_before, nodes_after, error) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
  insertNode_ = db_.prepare(
      "INSERT INTO nodes(run_id, node_id, first_pass, graph_owner, graph_attr, op_type, domain, name, attrs_json, "
      "annotations_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
  closeNode_ = db_.prepare("UPDATE nodes SET last_pass = ?4 WHERE run_id = ?1 AND node_id = ?2 AND first_pass = ?3");
  insertValue_ = db_.prepare(
      "INSERT INTO \"values\"(run_id, value_id, first_pass, graph_owner, graph_attr, name, dtype, shape, format, "
      "bytes, producer_node, producer_index, is_input, is_output, is_constant) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)");
  closeValue_ =
      db_.prepare("UPDATE \"values\" SET last_pass = ?4 WHERE run_id = ?1 AND value_id = ?2 AND first_pass = ?3");
  insertEdge_ = db_.prepare(
      "INSERT INTO edges(run_id, consumer_node, consumer_index, first_pass, value_id) VALUES (?1, ?2, ?3, ?4, ?5)");
  closeEdge_ = db_.prepare(
      "UPDATE edges SET last_pass = ?5 WHERE run_id = ?1 AND consumer_node = ?2 AND consumer_index = ?3 AND "
      "first_pass = ?4");
}

// ---------------------------------------------------------------- observer calls

void HistoryRecorder::runStarted(const Model& model, const Options& options) {
  Json optionsJson;
  guarded([&] { optionsJson = options.toJson(); });
  startRun(model, optionsJson);
}

void HistoryRecorder::startRun(const Model& model, const Json& options) {
  guarded([&] {
    if (runId_) throw HistoryError("runStarted called twice on one recorder");
    if (db_.readOnly()) throw HistoryError("the history database is open read-only");
    prepareStatements();
    SqlTransaction tx(db_.handle(), SqlTransaction::Kind::Write);

    // The model row is shared by every run of the same file (same path and size).
    std::string path = modelPath_, name;
    std::optional<int64_t> size;
    if (!path.empty()) {
      std::error_code ec;
      const auto abs = std::filesystem::absolute(path, ec);
      if (!ec) path = abs.lexically_normal().string();
      name = std::filesystem::path(path).filename().string();
      const auto bytes = std::filesystem::file_size(path, ec);
      if (!ec) size = static_cast<int64_t>(bytes);
    }
    if (name.empty()) name = model.graph->name();
    int64_t modelId = 0;
    {
      SqlStatement find = db_.prepare("SELECT id FROM models WHERE path = ?1 AND size_bytes IS ?2 LIMIT 1");
      find.bind(1, path).bind(2, size);
      if (find.step()) modelId = find.getInt(0);
    }
    if (!modelId) {
      SqlStatement add = db_.prepare("INSERT INTO models(path, name, size_bytes, added_at) VALUES (?1, ?2, ?3, ?4)");
      add.bind(1, path).bind(2, name).bind(3, size).bind(4, nowIso()).run();
      modelId = db_.lastInsertId();
    }

    const int64_t nodes = static_cast<int64_t>(model.graph->numNodesRecursive());
    SqlStatement run = db_.prepare(
        "INSERT INTO runs(model_id, options_json, kiln_version, started_at, status, nodes_before, writer_pid, "
        "writer_host) VALUES (?1, ?2, ?3, ?4, 'running', ?5, ?6, ?7)");
    run.bind(1, modelId)
        .bind(2, options.isNull() ? std::string("{}") : options.dump())
        .bind(3, KILN_VERSION)
        .bind(4, nowIso())
        .bind(5, nodes)
        .bind(6, static_cast<int64_t>(getpid()))
        .bind(7, hostName())
        .run();
    runId_ = db_.lastInsertId();

    PassRecord imported;
    imported.index = 0;
    imported.name = "import";
    imported.nodesBefore = imported.nodesAfter = nodes;
    insertPassRow(imported);
    recordGraph(model, 0);
    tx.commit();
    lastSeq_ = 0;
  });
}

void HistoryRecorder::afterPass(const PassRecord& record, const Model& model) {
  guarded([&] { recordPass(record, model); });
}

void HistoryRecorder::passFailed(const PassRecord& record, const Model& model) {
  guarded([&] { recordPass(record, model); });
}

void HistoryRecorder::runFinished(const RunSummary& summary, const Model& model) {
  guarded([&] {
    if (!runId_) return;
    SqlStatement upd = db_.prepare(
        "UPDATE runs SET status = ?2, finished_at = ?3, total_ms = ?4, nodes_before = ?5, nodes_after = ?6, "
        "error = ?7 WHERE id = ?1");
    upd.bind(1, runId_)
        .bind(2, statusText(summary.status))
        .bind(3, nowIso())
        .bind(4, summary.ms)
        .bind(5, summary.nodesBefore)
        .bind(6, summary.nodesAfter ? summary.nodesAfter : static_cast<int64_t>(model.graph->numNodesRecursive()));
    if (summary.error.empty())
      upd.bindNull(7);
    else
      upd.bind(7, summary.error);
    upd.run();
    finished_ = true;
  });
}

void HistoryRecorder::markIncomplete(const std::string& why) noexcept {
  try {
    SqlStatement upd = db_.prepare(
        "UPDATE runs SET status = 'incomplete', finished_at = ?2, error = ?3 WHERE id = ?1 AND status = 'running'");
    upd.bind(1, runId_).bind(2, nowIso()).bind(3, why).run();
  } catch (const std::exception&) {
    // Nothing more to do: the next writable open marks the run incomplete once this process is gone.
  }
}

// ---------------------------------------------------------------- one pass

void HistoryRecorder::recordPass(const PassRecord& record, const Model& model) {
  if (!runId_) throw HistoryError("a pass was reported before runStarted");
  // Validity intervals need strictly increasing pass numbers.
  if (record.index <= lastSeq_)
    throw HistoryError("pass " + record.name + " has index " + std::to_string(record.index) + " after pass " +
                       std::to_string(lastSeq_));
  SqlTransaction tx(db_.handle(), SqlTransaction::Kind::Write);
  insertPassRow(record);
  recordGraph(model, record.index);
  // The binding InputShapeBinding resolved, with the pass that resolved it (written once, when it appears).
  if (!model.binding.empty() && !bindingRecorded_) {
    SqlStatement upd = db_.prepare("UPDATE runs SET shape_binding = ?2 WHERE id = ?1");
    upd.bind(1, runId_).bind(2, model.binding.toJson().dump()).run();
    bindingRecorded_ = true;
  }
  tx.commit();
  lastSeq_ = record.index;
}

void HistoryRecorder::insertPassRow(const PassRecord& r) {
  insertPass_.bind(1, runId_)
      .bind(2, r.index)
      .bind(3, r.index == 0 ? std::string("import") : std::string(stageName(r.stage)))
      .bind(4, r.name)
      .bind(5, r.ms)
      .bind(6, r.changed ? 1 : 0)
      .bind(7, countersJson(r.counters))
      .bind(8, r.nodesBefore)
      .bind(9, r.nodesAfter);
  if (r.error.empty())
    insertPass_.bindNull(10);
  else
    insertPass_.bind(10, r.error);
  insertPass_.run();
}

void HistoryRecorder::recordGraph(const Model& model, int seq) {
  const Graph& main = *model.graph;
  // Revisions are comparable only within one id source; a pass that swapped the graph for one with a fresh id source
  // gets every object compared by content.
  const bool sameIds = ids_ && ids_ == main.idSource();
  const uint64_t since = sameIds ? seenRevision_ : 0;
  ++generation_;
  const size_t openNodesBefore = nodes_.size(), openValuesBefore = values_.size();
  size_t nodesStillThere = 0, valuesStillThere = 0;

  main.forEachGraph([&](const Graph& g) {
    for (const Node* n : g.nodes()) {
      stamp(nodeSeen_, n->id(), generation_);
      if (n->revision() <= since) {  // existed at the last record and untouched since
        ++nodesStillThere;
        continue;
      }
      auto it = nodes_.find(n->id());
      if (it == nodes_.end()) {
        insertNode(*n, seq);
      } else {
        ++nodesStillThere;
        updateNode(it->second, *n, seq);
      }
    }
    for (const Value* v : g.values()) {
      stamp(valueSeen_, v->id(), generation_);
      if (v->revision() <= since) {
        ++valuesStillThere;
        continue;
      }
      auto it = values_.find(v->id());
      if (it == values_.end()) {
        insertValue(*v, seq);
        continue;
      }
      ++valuesStillThere;
      ValueRow row = valueRowOf(*v);
      if (row.sameContent(it->second)) continue;
      closeValue_.bind(1, runId_).bind(2, row.id).bind(3, it->second.span.firstPass).bind(4, seq).run();
      ++stats_.rowsClosed;
      row.span.firstPass = seq;
      writeValueRow(row);
      it->second = std::move(row);
    }
  });

  // Erased objects leave no trace in the IR; the counts tell whether any went, the stamps which.
  if (nodesStillThere < openNodesBefore) {
    for (auto it = nodes_.begin(); it != nodes_.end();) {
      if (stamped(nodeSeen_, it->first, generation_)) {
        ++it;
        continue;
      }
      closeNode(it->second, seq);
      it = nodes_.erase(it);
    }
  }
  if (valuesStillThere < openValuesBefore) {
    for (auto it = values_.begin(); it != values_.end();) {
      if (stamped(valueSeen_, it->first, generation_)) {
        ++it;
        continue;
      }
      closeValue_.bind(1, runId_).bind(2, it->first).bind(3, it->second.span.firstPass).bind(4, seq).run();
      ++stats_.rowsClosed;
      it = values_.erase(it);
    }
  }
  ids_ = main.idSource();
  seenRevision_ = main.ids().revision;
}

// ---------------------------------------------------------------- rows

// Inserts the row opened at row.span.firstPass (shared by new nodes and re-versioned ones).
void HistoryRecorder::writeNodeRow(const NodeRow& r) {
  insertNode_.bind(1, runId_)
      .bind(2, r.id)
      .bind(3, r.span.firstPass)
      .bind(4, r.graphOwner)
      .bind(5, r.graphAttr)
      .bind(6, r.opType)
      .bind(7, r.domain)
      .bind(8, r.name)
      .bind(9, r.attrsJson)
      .bind(10, r.annotationsJson)
      .run();
  ++stats_.nodeRows;
}

void HistoryRecorder::insertNode(const Node& n, int seq) {
  OpenNode open;
  open.row = nodeRowOf(n);
  open.row.span.firstPass = seq;
  writeNodeRow(open.row);
  syncEdges(open, n, seq);
  const int64_t id = open.row.id;
  nodes_.emplace(id, std::move(open));
}

void HistoryRecorder::updateNode(OpenNode& open, const Node& n, int seq) {
  NodeRow row = nodeRowOf(n);
  if (!row.sameContent(open.row)) {
    closeNode_.bind(1, runId_).bind(2, row.id).bind(3, open.row.span.firstPass).bind(4, seq).run();
    ++stats_.rowsClosed;
    row.span.firstPass = seq;
    writeNodeRow(row);
    open.row = std::move(row);
  }
  // Rewiring alone does not re-version the node row: only the affected edge rows change.
  syncEdges(open, n, seq);
}

void HistoryRecorder::closeNode(OpenNode& open, int seq) {
  closeNode_.bind(1, runId_).bind(2, open.row.id).bind(3, open.row.span.firstPass).bind(4, seq).run();
  ++stats_.rowsClosed;
  for (size_t i = 0; i < open.inputs.size(); ++i) {
    if (!open.inputs[i]) continue;
    closeEdge_.bind(1, runId_)
        .bind(2, open.row.id)
        .bind(3, static_cast<int64_t>(i))
        .bind(4, open.edgeFirstPass[i])
        .bind(5, seq)
        .run();
    ++stats_.rowsClosed;
  }
}

void HistoryRecorder::syncEdges(OpenNode& open, const Node& n, int seq) {
  const size_t slots = std::max(open.inputs.size(), n.numInputs());
  open.inputs.resize(slots, 0);
  open.edgeFirstPass.resize(slots, 0);
  for (size_t i = 0; i < slots; ++i) {
    const Value* v = n.input(i);
    const int64_t now = v ? v->id() : 0;
    if (now == open.inputs[i]) continue;
    if (open.inputs[i]) {
      closeEdge_.bind(1, runId_)
          .bind(2, n.id())
          .bind(3, static_cast<int64_t>(i))
          .bind(4, open.edgeFirstPass[i])
          .bind(5, seq)
          .run();
      ++stats_.rowsClosed;
    }
    if (now) {
      insertEdge_.bind(1, runId_).bind(2, n.id()).bind(3, static_cast<int64_t>(i)).bind(4, seq).bind(5, now).run();
      ++stats_.edgeRows;
      open.edgeFirstPass[i] = seq;
    }
    open.inputs[i] = now;
  }
  // Trailing omitted slots carry nothing; trimming keeps the comparison short next time.
  while (!open.inputs.empty() && !open.inputs.back()) {
    open.inputs.pop_back();
    open.edgeFirstPass.pop_back();
  }
}

void HistoryRecorder::insertValue(const Value& v, int seq) {
  ValueRow row = valueRowOf(v);
  row.span.firstPass = seq;
  writeValueRow(row);
  values_.emplace(row.id, std::move(row));
}

void HistoryRecorder::writeValueRow(const ValueRow& r) {
  insertValue_.bind(1, runId_)
      .bind(2, r.id)
      .bind(3, r.span.firstPass)
      .bind(4, r.graphOwner)
      .bind(5, r.graphAttr)
      .bind(6, r.name)
      .bind(7, r.dtype);
  if (r.shape)
    insertValue_.bind(8, *r.shape);
  else
    insertValue_.bindNull(8);
  insertValue_.bind(9, r.format)
      .bind(10, r.bytes)
      .bind(11, r.producerNode)
      .bind(12, r.producerIndex)
      .bind(13, r.isInput ? 1 : 0)
      .bind(14, r.isOutput ? 1 : 0)
      .bind(15, r.isConstant ? 1 : 0)
      .run();
  ++stats_.valueRows;
}

}  // namespace kiln
