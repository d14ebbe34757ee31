#include "history/history_recorder.h"

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>

#include "history/annotation_changes.h"
#include "history/history_writer.h"
#include "ir/model.h"
#include "options/options.h"

#ifndef KILN_VERSION
#define KILN_VERSION "unknown"
#endif

namespace kiln {

namespace {


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

HistoryRecorder::~HistoryRecorder() { close(); }

void HistoryRecorder::close() {
  if (closed_) return;
  closed_ = true;
  followJournal(nullptr);
  if (writer_) {
    flush();
    writer_.reset();
  }
  if (runId_ && !finished_) markIncomplete(error_.empty() ? "recording stopped before the run finished" : error_);
}

void HistoryRecorder::flush() {
  if (!writer_) return;
  if (std::string e = writer_->flush(); !e.empty() && error_.empty()) error_ = "history: " + e;
  stats_.annotatedNodes = writer_->annotatedNodes();
}

// Moves the journal to the id source `now` (null: none). Only one recorder can follow a model's annotations.
void HistoryRecorder::followJournal(const std::shared_ptr<IdSource>& now) {
  if (journalOn_ && journalOn_->annotationJournal == &journal_) journalOn_->annotationJournal = nullptr;
  journalOn_ = now;
  journal_.clear();
  if (!now) return;
  if (now->annotationJournal) {
    journalOn_ = nullptr;
    throw HistoryError("another recorder is already recording this model");
  }
  now->annotationJournal = &journal_;
}

void HistoryRecorder::submit() {
  if (!writer_) writer_ = std::make_unique<HistoryWriter>(db_);
  writer_->submit(std::move(batch_));
  batch_ = PassRows{};
}

// Observer calls never throw into the PassManager: the first failure is kept and recording stops.
template <typename Fn>
void HistoryRecorder::guarded(Fn&& fn) noexcept {
  if (!error_.empty() || closed_) return;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    fn();
  } catch (const std::exception& e) {
    error_ = std::string("history: ") + e.what();
    // Recording stops here: the journal must not grow through the rest of the compile.
    try {
      followJournal(nullptr);
    } catch (const std::exception&) {
    }
  }
  stats_.ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
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
    tx.commit();  // the run exists (readers list it as running); its passes follow from the writer

    PassRecord imported;
    imported.index = 0;
    imported.name = "import";
    imported.nodesBefore = imported.nodesAfter = nodes;
    insertPassRow(imported);
    recordGraph(model, 0);
    submit();
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
    batch_.runId = runId_;
    batch_.seq = lastSeq_;
    PassRows::Finish f;
    f.status = statusText(summary.status);
    f.finishedAt = nowIso();
    f.totalMs = summary.ms;
    f.nodesBefore = summary.nodesBefore;
    f.nodesAfter = summary.nodesAfter ? summary.nodesAfter : static_cast<int64_t>(model.graph->numNodesRecursive());
    f.error = summary.error;
    batch_.finish = std::move(f);
    followJournal(nullptr);  // what changes after the run is not part of it
    submit();
    // Everything is committed when the run is reported finished: callers read it right after.
    flush();
    finished_ = error_.empty();
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
  insertPassRow(record);
  recordGraph(model, record.index);
  // The binding InputShapeBinding resolved, with the pass that resolved it (written once, when it appears).
  if (!model.binding.empty() && !bindingRecorded_) {
    batch_.shapeBindingJson = model.binding.toJson().dump();
    bindingRecorded_ = true;
  }
  submit();
  lastSeq_ = record.index;
}

// Starts the batch of pass r: its passes row; recordGraph adds the graph rows.
void HistoryRecorder::insertPassRow(const PassRecord& r) {
  batch_.runId = runId_;
  batch_.seq = r.index;
  PassRows::PassRow p;
  p.stage = r.index == 0 ? std::string("import") : std::string(stageName(r.stage));
  p.name = r.name;
  p.ms = r.ms;
  p.changed = r.changed;
  p.countersJson = countersJson(r.counters);
  p.nodesBefore = r.nodesBefore;
  p.nodesAfter = r.nodesAfter;
  p.error = r.error;
  batch_.pass = std::move(p);
}

void HistoryRecorder::recordGraph(const Model& model, int seq) {
  const Graph& main = *model.graph;
  // Revisions are comparable only within one id source; a pass that swapped the graph for one with a fresh id source
  // gets every object compared by content.
  const bool sameIds = ids_ && ids_ == main.idSource();
  const uint64_t since = sameIds ? seenRevision_ : 0;
  if (sameIds && main.ids().revision == since) return;  // nothing changed, nothing erased: no rows
  if (sameIds && main.ids().definitionRevision <= since) {
    // Only annotations changed (the scheduling passes): no node or value was made, erased or redefined, so every
    // journal entry is of a node whose row stays, and the graph need not be walked.
    batch_.annotationEdits = std::move(journal_);
    journal_.clear();
    seenRevision_ = main.ids().revision;
    return;
  }
  ++generation_;
  const size_t openNodesBefore = nodes_.size(), openValuesBefore = values_.size();
  size_t nodesStillThere = 0, valuesStillThere = 0;

  main.forEachGraph([&](const Graph& g) {
    for (const Node* n : g.nodes()) {
      stamp(nodeSeen_, n->id(), generation_);
      // Existed at the last record with the same definition: its annotation changes, if any, are in the journal.
      if (sameIds && n->definitionRevision() <= since) {
        ++nodesStillThere;
        continue;
      }
      auto it = nodes_.find(n->id());
      if (it == nodes_.end()) {
        insertNode(*n, seq);
      } else {
        ++nodesStillThere;
        updateNode(it->second, *n, seq, sameIds, sameIds && n->attrsRevision() <= since);
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
      if (row.sameContent(*it->second)) continue;
      batch_.closedValues.push_back({row.id, it->second->span.firstPass});
      ++stats_.rowsClosed;
      row.span.firstPass = seq;
      it->second = writeValueRow(std::move(row));
    }
  });

  // Erased objects leave no trace in the IR; the counts tell whether any went, the stamps which.
  if (nodesStillThere < openNodesBefore) {
    for (auto it = nodes_.begin(); it != nodes_.end();) {
      if (stamped(nodeSeen_, it->first, generation_)) {
        ++it;
        continue;
      }
      closeNode(it->second);
      it = nodes_.erase(it);
    }
  }
  if (valuesStillThere < openValuesBefore) {
    for (auto it = values_.begin(); it != values_.end();) {
      if (stamped(valueSeen_, it->first, generation_)) {
        ++it;
        continue;
      }
      batch_.closedValues.push_back({it->first, it->second->span.firstPass});
      ++stats_.rowsClosed;
      it = values_.erase(it);
    }
  }
  if (sameIds) {
    // A node made and erased within the pass (a fusion replaced again) logged edits the history has no row for.
    std::erase_if(journal_, [&](const AnnotationJournalEntry& e) { return !stamped(nodeSeen_, e.node, generation_); });
    batch_.annotationEdits = std::move(journal_);
    journal_.clear();
  } else {
    followJournal(main.idSource());  // every node of the new source was compared whole above
  }
  ids_ = main.idSource();
  seenRevision_ = main.ids().revision;
}

// ---------------------------------------------------------------- rows

// Inserts the row opened at row.span.firstPass (shared by new nodes and re-versioned ones). The batch and the open
// row share one immutable copy: the writer thread reads it while this thread compares the next passes with it.
std::shared_ptr<const NodeRow> HistoryRecorder::writeNodeRow(NodeRow r) {
  auto shared = std::make_shared<const NodeRow>(std::move(r));
  batch_.nodes.push_back(shared);
  ++stats_.nodeRows;
  return shared;
}

void HistoryRecorder::insertNode(const Node& n, int seq) {
  OpenNode open;
  NodeRow row = nodeRowOf(n);
  row.span.firstPass = seq;
  open.row = writeNodeRow(std::move(row));
  syncEdges(open, n, seq);
  const int64_t id = n.id();
  nodes_.emplace(id, std::move(open));
}

void HistoryRecorder::updateNode(OpenNode& open, const Node& n, int seq, bool journalled, bool attrsUnchanged) {
  // The row is compared in place (the attributes, tensor hashes among them, serialised again only when they
  // changed). When it stays, the journal carries the node's annotation changes into the pass's annotation_changes.
  // Without a journal for this node's id source (the pass replaced the graph) nothing says how the annotations
  // moved, so the row is written again whole; diffs compare rows by content, so an unchanged node still reads as
  // unchanged.
  if (!journalled || !sameStructure(*open.row, n, attrsUnchanged)) {
    NodeRow row = nodeRowOf(n, attrsUnchanged ? &open.row->attrsJson : nullptr);
    batch_.closedNodes.push_back({row.id, open.row->span.firstPass});
    ++stats_.rowsClosed;
    row.span.firstPass = seq;
    open.row = writeNodeRow(std::move(row));
  }
  // Rewiring alone does not re-version the node row: only the affected edge rows change.
  syncEdges(open, n, seq);
}

void HistoryRecorder::closeNode(OpenNode& open) {
  batch_.closedNodes.push_back({open.row->id, open.row->span.firstPass});
  ++stats_.rowsClosed;
  for (size_t i = 0; i < open.inputs.size(); ++i) {
    if (!open.inputs[i]) continue;
    batch_.closedEdges.push_back({open.row->id, static_cast<int64_t>(i), open.edgeFirstPass[i]});
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
      batch_.closedEdges.push_back({n.id(), static_cast<int64_t>(i), open.edgeFirstPass[i]});
      ++stats_.rowsClosed;
    }
    if (now) {
      batch_.edges.push_back({n.id(), static_cast<int64_t>(i), now});
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
  values_.emplace(v.id(), writeValueRow(std::move(row)));
}

std::shared_ptr<const ValueRow> HistoryRecorder::writeValueRow(ValueRow r) {
  auto shared = std::make_shared<const ValueRow>(std::move(r));
  batch_.values.push_back(shared);
  ++stats_.valueRows;
  return shared;
}

}  // namespace kiln
