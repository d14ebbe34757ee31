#include "history/history_reader.h"

#include <algorithm>
#include <array>
#include <functional>
#include <future>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>

#include "history/annotation_changes.h"
#include "history/pass_rows.h"
#include "util/json.h"

namespace kiln {

namespace {

// Column lists and row decoders, one per table, so every query returns rows in the same shape. The third column is
// the row's last pass where the query knows it (the ended lists give it, as p.seq), else NULL: the graph tables
// keep no last_pass (schema 7), and select() fills it in from the run's ended lists (Ends).
std::string nodeCols(const char* last = "NULL") {
  return std::string("node_id, first_pass, ") + last +
         ", graph_owner, graph_attr, op_type, domain, name, attrs_json, annotations_json";
}
std::string valueCols(const char* last = "NULL") {
  return std::string("value_id, first_pass, ") + last +
         ", graph_owner, graph_attr, name, dtype, shape, format, bytes, producer_node, producer_index, is_input, "
         "is_output, is_constant";
}
std::string edgeCols(const char* last = "NULL") {
  return std::string("value_id, consumer_node, consumer_index, first_pass, ") + last;
}

// Row selections over passes, "FROM ... WHERE ..." clauses; ?1 = run, ?2 = a, ?3 = b (a < b).
std::string from(pass_rows::Table t, std::string_view where) {
  return std::string("FROM \"") + pass_rows::tableName(t) + "\" WHERE " + std::string(where);
}
// Started by pass ?2; select() drops those ended by then (Ends::validAt).
std::string startedUpTo(pass_rows::Table t) { return from(t, "run_id = ?1 AND first_pass <= ?2"); }
// Ended in (a, b] (pass_rows lists them, with the pass that ended each); those valid at a are the ones started by
// a (startedBy).
std::string endedIn(pass_rows::Table t) { return pass_rows::listedRows(t, "ended"); }
template <typename Row>
std::vector<Row> startedBy(std::vector<Row> rows, int a) {
  std::erase_if(rows, [a](const Row& r) { return r.span.firstPass > a; });
  return rows;
}
// Started in (a, b] (pass_rows lists them for a >= 0); select() keeps those still valid at b. From a = -1 (the
// diff of pass 0) every row started by b qualifies and the run's key range is read instead.
std::string startedIn(pass_rows::Table t, int a) {
  if (a < 0) return from(t, "run_id = ?1 AND first_pass <= ?3");
  return pass_rows::listedRows(t, "started");
}

// The pass_rows ended lists of a run, per table, read when a query needs them: the end of each row.
class RunEnds {
 public:
  RunEnds(const HistoryDb& db, int64_t run) : db_(db), run_(run) {}
  const pass_rows::RowEnds& of(pass_rows::Table t) {
    std::optional<pass_rows::RowEnds>& e = ends_[static_cast<size_t>(t)];
    if (!e) {
      try {
        e.emplace(db_.handle(), run_, t);
      } catch (const HistoryError& x) {
        throw HistoryError(db_.path() + ": run " + std::to_string(run_) + ", pass_rows: " + x.what());
      }
    }
    return *e;
  }

 private:
  const HistoryDb& db_;
  int64_t run_;
  std::array<std::optional<pass_rows::RowEnds>, 3> ends_;
};

std::optional<int> endOf(const pass_rows::RowEnds& e, const NodeRow& r) { return e.of(r.id, r.span.firstPass); }

RowSpan spanFrom(const SqlStatement& q, int first) {
  RowSpan s;
  s.firstPass = static_cast<int>(q.getInt(first));
  if (!q.isNull(first + 1)) s.lastPass = static_cast<int>(q.getInt(first + 1));
  return s;
}

NodeRow nodeFrom(const SqlStatement& q) {
  NodeRow r;
  r.id = q.getInt(0);
  r.span = spanFrom(q, 1);
  r.graphOwner = q.getInt(3);
  r.graphAttr = q.getText(4);
  r.opType = q.getText(5);
  r.domain = q.getText(6);
  r.name = q.getText(7);
  r.attrsJson = q.getText(8);
  r.annotationsJson = q.getText(9);
  return r;
}

ValueRow valueFrom(const SqlStatement& q) {
  ValueRow r;
  r.id = q.getInt(0);
  r.span = spanFrom(q, 1);
  r.graphOwner = q.getInt(3);
  r.graphAttr = q.getText(4);
  r.name = q.getText(5);
  r.dtype = q.getText(6);
  if (!q.isNull(7)) r.shape = q.getText(7);
  r.format = q.getText(8);
  r.bytes = q.getOptInt(9);
  r.producerNode = q.getOptInt(10);
  r.producerIndex = q.getOptInt(11);
  r.isInput = q.getInt(12) != 0;
  r.isOutput = q.getInt(13) != 0;
  r.isConstant = q.getInt(14) != 0;
  return r;
}

EdgeRow edgeFrom(const SqlStatement& q) {
  EdgeRow r;
  r.valueId = q.getInt(0);
  r.consumerNode = q.getInt(1);
  r.consumerIndex = q.getInt(2);
  r.span = spanFrom(q, 3);
  return r;
}

// Runs one row selection ("FROM ... WHERE ..."). The diff selections (with ?3) touch few rows: they carry no ORDER
// BY, which would make SQLite walk the run's whole primary key instead of looking up the rows pass_rows lists, and
// are sorted here.
// Where a selection's rows end (`rows`, the run's ended lists) and the pass they must be valid at, if any: rows
// ended by then are skipped before their text is decoded (a late pass's range holds every earlier version too).
struct Ends {
  const pass_rows::RowEnds* rows = nullptr;
  std::optional<int> validAt;
};

// A row's end from its key columns, per table.
std::optional<int> nodeOrValueEnd(const pass_rows::RowEnds& e, const SqlStatement& q) {
  return e.of(q.getInt(0), q.getInt(1));
}
std::optional<int> edgeEnd(const pass_rows::RowEnds& e, const SqlStatement& q) {
  return e.of(q.getInt(1), q.getInt(2), q.getInt(3));
}

template <typename Row, typename Decode, typename Less>
std::vector<Row> select(const HistoryDb& db, const std::string& cols, const std::string& fromWhere, const char* order,
                        int64_t run, int a, int b, Decode decode, Less less, const Ends& ends,
                        std::optional<int> (*endOf)(const pass_rows::RowEnds&, const SqlStatement&)) {
  const bool range = fromWhere.find("?3") != std::string::npos;
  std::vector<Row> out;
  try {
    SqlStatement q = db.prepare(std::string("SELECT ") + cols + " " + fromWhere +
                                (range ? std::string() : std::string(" ORDER BY ") + order));
    q.bind(1, run).bind(2, a);
    if (range) q.bind(3, b);
    while (q.step()) {
      if (!ends.rows) {
        out.push_back(decode(q));
        continue;
      }
      const std::optional<int> last = endOf(*ends.rows, q);
      if (ends.validAt && last && *last <= *ends.validAt) continue;
      out.push_back(decode(q));
      out.back().span.lastPass = last;
    }
  } catch (const HistoryError& e) {
    // A damaged file (a pass_rows list that is not JSON, a corrupt page): say which file and which rows.
    throw HistoryError(db.path() + ": run " + std::to_string(run) + ", " +
                       (range ? "passes " + std::to_string(a) + " to " + std::to_string(b)
                              : "pass " + std::to_string(a)) +
                       ": " + e.what());
  }
  if (range) std::sort(out.begin(), out.end(), less);
  return out;
}

bool byId(const auto& x, const auto& y) { return x.id < y.id; }
bool bySlot(const EdgeRow& x, const EdgeRow& y) {
  return std::tie(x.consumerNode, x.consumerIndex) < std::tie(y.consumerNode, y.consumerIndex);
}

// `last` is the column the row's last pass is read from ("p.seq" for the ended lists); else `ends` gives it.
std::vector<NodeRow> selectNodes(const HistoryDb& db, const std::string& fromWhere, int64_t run, int a, int b,
                                 const char* last, const Ends& ends = {}) {
  return select<NodeRow>(db, nodeCols(last), fromWhere, "node_id", run, a, b, nodeFrom, byId<NodeRow, NodeRow>,
                         ends, nodeOrValueEnd);
}
std::vector<ValueRow> selectValues(const HistoryDb& db, const std::string& fromWhere, int64_t run, int a, int b,
                                   const char* last, const Ends& ends = {}) {
  return select<ValueRow>(db, valueCols(last), fromWhere, "value_id", run, a, b, valueFrom,
                          byId<ValueRow, ValueRow>, ends, nodeOrValueEnd);
}
std::vector<EdgeRow> selectEdges(const HistoryDb& db, const std::string& fromWhere, int64_t run, int a, int b,
                                 const char* last, const Ends& ends = {}) {
  return select<EdgeRow>(db, edgeCols(last), fromWhere, "consumer_node, consumer_index", run, a, b, edgeFrom,
                         bySlot, ends, edgeEnd);
}

// The rows of each table valid at pass k.
std::vector<NodeRow> nodesAt(const HistoryDb& db, RunEnds& ends, int64_t run, int k) {
  return selectNodes(db, startedUpTo(pass_rows::Table::Nodes), run, k, 0, "NULL",
                     {&ends.of(pass_rows::Table::Nodes), k});
}
std::vector<ValueRow> valuesAt(const HistoryDb& db, RunEnds& ends, int64_t run, int k) {
  return selectValues(db, startedUpTo(pass_rows::Table::Values), run, k, 0, "NULL",
                      {&ends.of(pass_rows::Table::Values), k});
}
std::vector<EdgeRow> edgesAt(const HistoryDb& db, RunEnds& ends, int64_t run, int k) {
  return selectEdges(db, startedUpTo(pass_rows::Table::Edges), run, k, 0, "NULL",
                     {&ends.of(pass_rows::Table::Edges), k});
}

// Node `id` at `pass`: its newest row started by then, unless that row had ended by then.
std::optional<NodeRow> nodeAt(const HistoryDb& db, RunEnds& ends, int64_t run, int64_t id, int pass) {
  SqlStatement q = db.prepare("SELECT " + nodeCols() +
                              " FROM nodes WHERE run_id = ?1 AND node_id = ?3 AND first_pass <= ?2 "
                              "ORDER BY first_pass DESC LIMIT 1");
  q.bind(1, run).bind(2, pass).bind(3, id);
  if (!q.step()) return std::nullopt;
  NodeRow r = nodeFrom(q);
  r.span.lastPass = endOf(ends.of(pass_rows::Table::Nodes), r);
  if (!r.span.validAt(pass)) return std::nullopt;
  return r;
}

// The node rows with these ids (ascending) valid at `pass`: from `at` when given (the graph at that pass), else read
// raw from the table (annotation changes not applied).
std::vector<NodeRow> rowsAt(const HistoryDb& db, RunEnds& ends, int64_t runId, int pass,
                            const std::vector<int64_t>& ids, const GraphSnapshot* at) {
  std::vector<NodeRow> out;
  if (ids.empty()) return out;
  if (at) {
    for (int64_t id : ids)
      if (const NodeRow* r = at->node(id)) out.push_back(*r);
    return out;
  }
  // Many ids: one pass over the run's rows beats a lookup per id.
  if (ids.size() > 256) {
    for (NodeRow& r : nodesAt(db, ends, runId, pass))
      if (std::binary_search(ids.begin(), ids.end(), r.id)) out.push_back(std::move(r));
    return out;
  }
  for (int64_t id : ids)
    if (auto r = nodeAt(db, ends, runId, id, pass)) out.push_back(std::move(*r));
  return out;
}


// Adds the annotation changes of passes (from, to] of a run to `log`: every node's, or those `wanted` accepts.
void loadAnnotationChanges(const HistoryDb& db, int64_t run, int from, int to, AnnotationLog& log,
                           const std::function<bool(int64_t)>& wanted = {}) {
  if (from >= to) return;
  SqlStatement q =
      db.prepare("SELECT seq, changes_json FROM annotation_changes WHERE run_id = ?1 AND seq > ?2 AND seq <= ?3 "
                 "ORDER BY seq");
  q.bind(1, run).bind(2, from).bind(3, to);
  while (q.step()) {
    const int seq = static_cast<int>(q.getInt(0));
    try {
      log.add(seq, q.getText(1), wanted);
    } catch (const JsonError& e) {
      throw HistoryError(db.path() + ": run " + std::to_string(run) + ", pass " + std::to_string(seq) +
                         ": unreadable annotation_changes (" + e.what() + ")");
    }
  }
}

// Names of the keys of two JSON objects whose values differ (present on one side only included).
std::vector<std::string> differingKeys(const std::string& a, const std::string& b, const char* whole) {
  if (a == b) return {};
  try {
    const Json ja = Json::parse(a), jb = Json::parse(b);
    std::set<std::string> keys;
    for (const auto* j : {&ja, &jb})
      if (j->isObject())
        for (const auto& kv : j->asObject()) keys.insert(kv.first);
    std::vector<std::string> out;
    for (const std::string& k : keys) {
      const Json* x = ja.isObject() ? ja.find(k) : nullptr;
      const Json* y = jb.isObject() ? jb.find(k) : nullptr;
      if (!x || !y || !(*x == *y)) out.push_back(k);
    }
    return out;
  } catch (const JsonError&) {
    return {whole};  // unreadable (hand-edited) row: report the whole column as changed
  }
}

// differingKeys for annotation cells, read as flat string maps (the common case: a scheduling pass's diff compares
// tens of thousands of them).
std::vector<std::string> differingAnnotationKeys(const std::string& a, const std::string& b) {
  if (a == b) return {};
  Annotations x, y;
  try {
    x = parseAnnotations(a);
    y = parseAnnotations(b);
  } catch (const JsonError&) {
    return differingKeys(a, b, "(annotations)");
  }
  std::vector<std::string> out;
  auto i = x.begin(), j = y.begin();
  while (i != x.end() || j != y.end()) {
    if (j == y.end() || (i != x.end() && i->first < j->first)) {
      out.push_back((i++)->first);
    } else if (i == x.end() || j->first < i->first) {
      out.push_back((j++)->first);
    } else {
      if (i->second != j->second) out.push_back(i->first);
      ++i;
      ++j;
    }
  }
  return out;
}

NodeChange compareNodes(NodeRow before, NodeRow after) {
  NodeChange c;
  c.opType = before.opType != after.opType;
  c.domain = before.domain != after.domain;
  c.name = before.name != after.name;
  c.graph = before.graphOwner != after.graphOwner || before.graphAttr != after.graphAttr;
  c.attrs = differingKeys(before.attrsJson, after.attrsJson, "(attributes)");
  c.annotations = differingAnnotationKeys(before.annotationsJson, after.annotationsJson);
  c.before = std::move(before);
  c.after = std::move(after);
  return c;
}

int64_t singleInt(const HistoryDb& db, const std::string& sql, int64_t run, int64_t fallback) {
  SqlStatement q = db.prepare(sql);
  q.bind(1, run);
  if (!q.step() || q.isNull(0)) return fallback;
  return q.getInt(0);
}

std::vector<RunInfo> queryRuns(const HistoryDb& db, std::optional<int64_t> only) {
  SqlStatement q = db.prepare(std::string(
      "SELECT r.id, r.model_id, m.path, m.name, m.size_bytes, r.status, r.started_at, r.finished_at, r.total_ms, "
      "r.nodes_before, r.nodes_after, r.error, r.kiln_version, r.options_json, r.writer_pid, r.writer_host, "
      "(SELECT count(*) FROM passes p WHERE p.run_id = r.id), (SELECT max(seq) FROM passes p WHERE p.run_id = r.id), "
      "r.shape_binding FROM runs r JOIN models m ON m.id = r.model_id") +
      (only ? " WHERE r.id = ?1" : "") + " ORDER BY r.id");
  if (only) q.bind(1, *only);
  std::vector<RunInfo> out;
  while (q.step()) {
    RunInfo r;
    r.id = q.getInt(0);
    r.modelId = q.getInt(1);
    r.modelPath = q.getText(2);
    r.modelName = q.getText(3);
    r.modelBytes = q.getOptInt(4);
    r.status = q.getText(5);
    r.startedAt = q.getText(6);
    r.finishedAt = q.getText(7);
    if (!q.isNull(8)) r.totalMs = q.getDouble(8);
    r.nodesBefore = q.getOptInt(9);
    r.nodesAfter = q.getOptInt(10);
    r.error = q.getText(11);
    r.kilnVersion = q.getText(12);
    r.optionsJson = q.getText(13);
    r.writerPid = q.getInt(14);
    r.writerHost = q.getText(15);
    r.passCount = static_cast<int>(q.getInt(16));
    r.lastPass = q.isNull(17) ? -1 : static_cast<int>(q.getInt(17));
    r.shapeBindingJson = q.getText(18);
    out.push_back(std::move(r));
  }
  summariseOptions(out);
  return out;
}

// Pairs up two id-sorted row lists (valid at the earlier pass only / at the later one only): ids on one side only
// go to `removed` / `added`, ids on both to `both(before, after)`.
template <typename Row, typename Both>
void mergeById(std::vector<Row>& gone, std::vector<Row>& fresh, std::vector<Row>& removed, std::vector<Row>& added,
               Both both) {
  size_t i = 0, j = 0;
  while (i < gone.size() || j < fresh.size()) {
    if (j == fresh.size() || (i < gone.size() && gone[i].id < fresh[j].id)) {
      removed.push_back(std::move(gone[i++]));
    } else if (i == gone.size() || fresh[j].id < gone[i].id) {
      added.push_back(std::move(fresh[j++]));
    } else {
      both(gone[i++], fresh[j++]);
    }
  }
}

template <typename Row>
const Row* findById(const std::vector<Row>& rows, int64_t id) {
  auto it = std::lower_bound(rows.begin(), rows.end(), id, [](const Row& r, int64_t x) { return r.id < x; });
  return it != rows.end() && it->id == id ? &*it : nullptr;
}

}  // namespace

// "key=value" for the options worth seeing in a run list: a few headline keys, then every key whose value differs
// between the runs listed together (what distinguishes them).
void summariseOptions(std::vector<RunInfo>& runs) {
  static const char* const kHeadline[] = {"soc_version", "precision_mode", "oo_level"};
  std::vector<Json> parsed;
  parsed.reserve(runs.size());
  for (const RunInfo& r : runs) {
    try {
      parsed.push_back(Json::parse(r.optionsJson));
    } catch (const JsonError&) {
      parsed.push_back(Json::object());
    }
  }
  std::vector<std::string> keys(std::begin(kHeadline), std::end(kHeadline));
  std::set<std::string> seen(keys.begin(), keys.end());
  for (const Json& p : parsed) {
    if (!p.isObject()) continue;
    for (const auto& [k, v] : p.asObject()) {
      if (seen.count(k)) continue;
      for (const Json& other : parsed) {
        const Json* o = other.isObject() ? other.find(k) : nullptr;
        if (!o || !(*o == v)) {
          keys.push_back(k);
          seen.insert(k);
          break;
        }
      }
    }
  }
  auto text = [](const Json& v) { return v.isString() ? v.asString() : v.dump(); };
  const size_t headline = std::size(kHeadline);
  for (size_t i = 0; i < runs.size(); ++i) {
    std::string s, diff, head;
    const Json& p = parsed[i];
    for (size_t k = 0; k < keys.size(); ++k) {
      const Json* v = p.isObject() ? p.find(keys[k]) : nullptr;
      if (!v) continue;
      if (!s.empty()) s += ' ';
      s += keys[k] + "=" + text(*v);
      if (k < headline) head += (head.empty() ? "" : " · ") + text(*v);
    }
    // What tells this run apart: the keys whose values differ between the listed runs (headline keys included).
    for (const std::string& k : keys) {
      const Json* v = p.isObject() ? p.find(k) : nullptr;
      bool differs = false;
      for (const Json& other : parsed) {
        const Json* o = other.isObject() ? other.find(k) : nullptr;
        differs = differs || !o || !v || !(*o == *v);
      }
      if (differs && v) diff += (diff.empty() ? "" : " ") + k + "=" + text(*v);
    }
    if (isImportedRun(runs[i])) {  // GE's files or a measured profile: where they came from, not Kiln's options
      const Json* graph = p.find("graph");
      const Json* source = p.find("source");
      const std::string from = source && source->isString() ? source->asString() : std::string();
      diff = from == "GE graph dumps" || from.empty()
                 ? "GE dumps: " + (graph && graph->isString() ? graph->asString() : std::string("imported"))
                 : from;
      head = diff;
    }
    runs[i].optionsSummary = s;
    runs[i].optionsDiff = diff;
    runs[i].optionsHeadline = head;
  }
}

// ---------------------------------------------------------------- result helpers

GraphSnapshot snapshotOf(const Graph& g) {
  GraphSnapshot s;
  g.forEachGraph([&](const Graph& sub) {
    for (const Node* n : sub.nodes()) {
      s.nodes.push_back(nodeRowOf(*n));
      for (size_t i = 0; i < n->numInputs(); ++i)
        if (const Value* v = n->input(i)) s.edges.push_back({v->id(), n->id(), int64_t(i), {}});
    }
    for (const Value* v : sub.values()) s.values.push_back(valueRowOf(*v));
  });
  std::sort(s.nodes.begin(), s.nodes.end(), byId<NodeRow, NodeRow>);
  std::sort(s.values.begin(), s.values.end(), byId<ValueRow, ValueRow>);
  std::sort(s.edges.begin(), s.edges.end(), bySlot);
  return s;
}

GraphSnapshot graphBefore(const GraphSnapshot& after, const GraphDiff& d) {
  GraphSnapshot s;
  s.runId = after.runId;
  s.pass = d.fromPass;
  // Rows: the later graph's, less what the diff added, with the earlier side of what it changed, plus what it
  // removed; sorted as graphAt sorts them.
  auto rebuild = [](const auto& later, const auto& added, const auto& changed, const auto& removed, auto& out) {
    std::set<int64_t> gone;
    for (const auto& r : added) gone.insert(r.id);
    std::unordered_map<int64_t, const std::remove_cvref_t<decltype(removed.front())>*> earlier;
    for (const auto& c : changed) earlier[c.after.id] = &c.before;
    out.reserve(later.size() + removed.size());
    for (const auto& r : later) {
      if (gone.count(r.id)) continue;
      auto it = earlier.find(r.id);
      out.push_back(it == earlier.end() ? r : *it->second);
    }
    out.insert(out.end(), removed.begin(), removed.end());
    std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) { return x.id < y.id; });
  };
  rebuild(after.nodes, d.addedNodes, d.changedNodes, d.removedNodes, s.nodes);
  rebuild(after.values, d.addedValues, d.changedValues, d.removedValues, s.values);
  auto key = [](const EdgeRow& e) { return std::tuple(e.consumerNode, e.consumerIndex, e.valueId); };
  std::set<std::tuple<int64_t, int64_t, int64_t>> addedEdges;
  for (const auto& e : d.addedEdges) addedEdges.insert(key(e));
  for (const auto& e : after.edges)
    if (!addedEdges.count(key(e))) s.edges.push_back(e);
  s.edges.insert(s.edges.end(), d.removedEdges.begin(), d.removedEdges.end());
  std::sort(s.edges.begin(), s.edges.end(), bySlot);
  return s;
}

const NodeRow* GraphSnapshot::node(int64_t id) const { return findById(nodes, id); }
const ValueRow* GraphSnapshot::value(int64_t id) const { return findById(values, id); }

std::vector<std::string> NodeChange::fields() const {
  std::vector<std::string> f;
  if (opType) f.push_back("op_type");
  if (domain) f.push_back("domain");
  if (name) f.push_back("name");
  if (graph) f.push_back("graph");
  for (const auto& a : attrs) f.push_back("attr:" + a);
  for (const auto& a : annotations) f.push_back("annotation:" + a);
  if (inputs) f.push_back("inputs");
  if (outputs) f.push_back("outputs");
  return f;
}

std::vector<std::string> ValueChange::fields() const {
  std::vector<std::string> f;
  const ValueRow& a = before;
  const ValueRow& b = after;
  if (a.name != b.name) f.push_back("name");
  if (a.dtype != b.dtype) f.push_back("dtype");
  if (a.shape != b.shape) f.push_back("shape");
  if (a.format != b.format) f.push_back("format");
  if (a.bytes != b.bytes) f.push_back("bytes");
  if (a.producerNode != b.producerNode || a.producerIndex != b.producerIndex) f.push_back("producer");
  if (a.isInput != b.isInput) f.push_back("is_input");
  if (a.isOutput != b.isOutput) f.push_back("is_output");
  if (a.isConstant != b.isConstant) f.push_back("is_constant");
  if (a.graphOwner != b.graphOwner || a.graphAttr != b.graphAttr) f.push_back("graph");
  return f;
}

bool ValueChange::typeChanged() const {
  return before.dtype != after.dtype || before.shape != after.shape || before.format != after.format;
}

bool GraphDiff::empty() const {
  return addedNodes.empty() && removedNodes.empty() && changedNodes.empty() && addedValues.empty() &&
         removedValues.empty() && changedValues.empty() && addedEdges.empty() && removedEdges.empty();
}

// ---------------------------------------------------------------- HistoryReader

std::vector<RunInfo> HistoryReader::listRuns() const {
  SqlTransaction tx(db_.handle(), SqlTransaction::Kind::Read);
  return queryRuns(db_, std::nullopt);
}

bool isImportedRun(const RunInfo& run) {
  try {
    const Json j = Json::parse(run.optionsJson, 8);
    return j.isObject() && j.find("source") && j.find("source")->isString();
  } catch (const JsonError&) {
    return false;
  }
}

RunInfo HistoryReader::run(int64_t runId) const {
  SqlTransaction tx(db_.handle(), SqlTransaction::Kind::Read);
  auto runs = queryRuns(db_, runId);
  if (runs.empty()) throw HistoryError("no run " + std::to_string(runId) + " in " + db_.path());
  return std::move(runs.front());
}

int64_t HistoryReader::importedMaxNodeId(int64_t runId) const {
  SqlTransaction tx(db_.handle(), SqlTransaction::Kind::Read);
  return singleInt(db_, "SELECT coalesce(max(node_id), 0) FROM nodes WHERE run_id = ?1 AND first_pass = 0", runId, 0);
}

std::vector<PassInfo> HistoryReader::passes(int64_t runId) const {
  SqlTransaction tx(db_.handle(), SqlTransaction::Kind::Read);
  if (singleInt(db_, "SELECT count(*) FROM runs WHERE id = ?1", runId, 0) == 0)
    throw HistoryError("no run " + std::to_string(runId) + " in " + db_.path());
  // Node rows started and ended per pass: the import's are the rows of pass 0, the rest are listed in pass_rows.
  std::map<int, int64_t> started, ended;
  started[0] = singleInt(db_, "SELECT count(*) FROM nodes WHERE run_id = ?1 AND first_pass = 0", runId, 0);
  try {
    SqlStatement q = db_.prepare("SELECT seq, json_array_length(started), json_array_length(ended) FROM pass_rows "
                                 "WHERE run_id = ?1 AND graph_table = 'nodes' AND seq > 0");
    q.bind(1, runId);
    while (q.step()) {
      started[static_cast<int>(q.getInt(0))] = q.getInt(1);
      ended[static_cast<int>(q.getInt(0))] = q.getInt(2);
    }
  } catch (const HistoryError& e) {
    throw HistoryError(db_.path() + ": run " + std::to_string(runId) + ", pass_rows: " + e.what());
  }
  std::map<int, int64_t> annotated;
  {
    SqlStatement q = db_.prepare("SELECT seq, nodes FROM annotation_changes WHERE run_id = ?1");
    q.bind(1, runId);
    while (q.step()) annotated[static_cast<int>(q.getInt(0))] = q.getInt(1);
  }
  SqlStatement q = db_.prepare(
      "SELECT seq, stage, name, ms, changed, counters_json, nodes_before, nodes_after, error FROM passes "
      "WHERE run_id = ?1 ORDER BY seq");
  q.bind(1, runId);
  std::vector<PassInfo> out;
  while (q.step()) {
    PassInfo p;
    p.seq = static_cast<int>(q.getInt(0));
    p.stage = q.getText(1);
    p.name = q.getText(2);
    p.ms = q.getDouble(3);
    p.changed = q.getInt(4) != 0;
    try {
      const Json c = Json::parse(q.getText(5));
      if (c.isObject())
        for (const auto& [k, v] : c.asObject())
          if (v.isNumber()) p.counters[k] = v.asInt();
    } catch (const JsonError&) {
      // Counters are informative only; an unreadable cell leaves them empty.
    }
    p.nodesBefore = q.getOptInt(6);
    p.nodesAfter = q.getOptInt(7);
    p.error = q.getText(8);
    p.nodeRowsStarted = started.count(p.seq) ? started[p.seq] : 0;
    p.nodeRowsEnded = ended.count(p.seq) ? ended[p.seq] : 0;
    p.nodesAnnotated = annotated.count(p.seq) ? annotated[p.seq] : 0;
    out.push_back(std::move(p));
  }
  return out;
}

void HistoryReader::requirePass(int64_t runId, int pass) const {
  SqlStatement q = db_.prepare(
      "SELECT (SELECT count(*) FROM runs WHERE id = ?1), (SELECT count(*) FROM passes WHERE run_id = ?1 AND seq = ?2),"
      " (SELECT max(seq) FROM passes WHERE run_id = ?1)");
  q.bind(1, runId).bind(2, pass);
  q.step();
  if (q.getInt(0) == 0) throw HistoryError("no run " + std::to_string(runId) + " in " + db_.path());
  if (q.getInt(1) == 0)
    throw HistoryError("run " + std::to_string(runId) + " has no pass " + std::to_string(pass) +
                       (q.isNull(2) ? std::string(" (no passes recorded)")
                                    : " (passes 0.." + std::to_string(q.getInt(2)) + ")"));
}

GraphSnapshot HistoryReader::graphAt(int64_t runId, int pass) const {
  SqlTransaction tx(db_.handle(), SqlTransaction::Kind::Read);
  requirePass(runId, pass);
  GraphSnapshot s;
  s.runId = runId;
  s.pass = pass;
  // The values and edges are read on a second connection while this one reads the nodes and replays their
  // annotations: on a 50k-node pass each half takes about 150 ms. The pass is committed, so both connections see
  // the same rows (a writer appending later passes only closes rows after it). An in-memory database has one
  // connection only.
  auto readValuesAndEdges = [runId, pass](const HistoryDb& db) {
    RunEnds ends(db, runId);
    return std::pair(valuesAt(db, ends, runId, pass), edgesAt(db, ends, runId, pass));
  };
  std::future<std::pair<std::vector<ValueRow>, std::vector<EdgeRow>>> valuesAndEdges;
  const bool fileBacked = db_.path() != ":memory:" && db_.path().rfind("file:", 0) != 0;
  if (fileBacked)
    valuesAndEdges = std::async(std::launch::async, [&readValuesAndEdges, second = db_.anotherReader()] {
      SqlTransaction secondTx(second->handle(), SqlTransaction::Kind::Read);
      return readValuesAndEdges(*second);
    });
  RunEnds ends(db_, runId);
  s.nodes = nodesAt(db_, ends, runId, pass);
  AnnotationLog log;
  loadAnnotationChanges(db_, runId, -1, pass, log);
  log.applyForward(s.nodes, pass);  // added in pass order: no seal needed
  std::tie(s.values, s.edges) = fileBacked ? valuesAndEdges.get() : readValuesAndEdges(db_);
  return s;
}

std::vector<NodeRow> HistoryReader::fusedNodeRows(int64_t runId) const {
  SqlTransaction tx(db_.handle(), SqlTransaction::Kind::Read);
  // LIKE narrows the scan to candidate rows; the caller parses the annotations and keeps real records only.
  SqlStatement q = db_.prepare("SELECT " + nodeCols() +
                               " FROM nodes WHERE run_id = ?1 AND annotations_json LIKE '%\"fusion.rule\"%'"
                               " ORDER BY node_id, first_pass");
  q.bind(1, runId);
  std::vector<NodeRow> out;
  while (q.step()) out.push_back(nodeFrom(q));
  RunEnds ends(db_, runId);
  for (NodeRow& r : out) r.span.lastPass = endOf(ends.of(pass_rows::Table::Nodes), r);
  return out;
}

GraphDiff HistoryReader::diff(int64_t runId, int pass) const {
  SqlTransaction tx(db_.handle(), SqlTransaction::Kind::Read);
  requirePass(runId, pass);
  // Pass numbers need not be contiguous: compare with the pass recorded just before (none before pass 0).
  SqlStatement q = db_.prepare("SELECT max(seq) FROM passes WHERE run_id = ?1 AND seq < ?2");
  q.bind(1, runId).bind(2, pass);
  q.step();
  const int previous = q.isNull(0) ? -1 : static_cast<int>(q.getInt(0));
  return diffForward(runId, previous, pass);
}

GraphDiff HistoryReader::diff(int64_t runId, int fromPass, int toPass) const {
  SqlTransaction tx(db_.handle(), SqlTransaction::Kind::Read);
  requirePass(runId, fromPass);
  requirePass(runId, toPass);
  if (fromPass <= toPass) return diffForward(runId, fromPass, toPass);
  // Backwards is the forward diff with both sides swapped.
  GraphDiff d = diffForward(runId, toPass, fromPass);
  std::swap(d.addedNodes, d.removedNodes);
  std::swap(d.addedValues, d.removedValues);
  std::swap(d.addedEdges, d.removedEdges);
  for (auto& c : d.changedNodes) std::swap(c.before, c.after);
  for (auto& c : d.changedValues) std::swap(c.before, c.after);
  d.fromPass = fromPass;
  d.toPass = toPass;
  return d;
}

GraphDiff HistoryReader::diff(const GraphSnapshot& later, int fromPass) const {
  if (fromPass > later.pass) return diff(later.runId, fromPass, later.pass);
  SqlTransaction tx(db_.handle(), SqlTransaction::Kind::Read);
  requirePass(later.runId, fromPass);
  return diffForward(later.runId, fromPass, later.pass, &later);
}

GraphDiff HistoryReader::diffForward(int64_t runId, int a, int b, const GraphSnapshot* later) const {
  GraphDiff d;
  d.runId = runId;
  d.fromPass = a;
  d.toPass = b;
  if (a == b) return d;

  // Only rows valid at exactly one of the two passes can differ; rows valid at both are the same row (their
  // annotations aside, which annotation_changes carries).
  // Rows ended in (a, b] come with the pass that ended them; those started in (a, b] are read with the run's ends
  // (taken from `later` when given), which drop the ones ended by b and give the others their last pass.
  using pass_rows::Table;
  RunEnds ends(db_, runId);
  auto endedRows = [&](Table t, auto select) { return startedBy(select(db_, endedIn(t), runId, a, b, "p.seq", Ends{}), a); };
  auto startedRows = [&](Table t, const auto& laterRows, auto select) {
    if (later) {
      std::remove_cvref_t<decltype(laterRows)> out;
      for (const auto& r : laterRows)
        if (r.span.firstPass > a) out.push_back(r);
      return out;
    }
    return select(db_, startedIn(t, a), runId, a, b, "NULL", Ends{&ends.of(t), b});
  };
  const std::vector<NodeRow> noNodes;
  const std::vector<ValueRow> noValues;
  const std::vector<EdgeRow> noEdges;
  std::vector<NodeRow> nodesGone = endedRows(Table::Nodes, selectNodes);
  std::vector<NodeRow> nodesNew = startedRows(Table::Nodes, later ? later->nodes : noNodes, selectNodes);
  std::vector<ValueRow> valuesGone = endedRows(Table::Values, selectValues);
  std::vector<ValueRow> valuesNew = startedRows(Table::Values, later ? later->values : noValues, selectValues);
  std::vector<EdgeRow> edgesGone = endedRows(Table::Edges, selectEdges);
  std::vector<EdgeRow> edgesNew = startedRows(Table::Edges, later ? later->edges : noEdges, selectEdges);

  // Edges: matched by content (an edge removed and re-added between a and b is unchanged). A kept node whose
  // inputs or outputs moved is changed even when its own row is not.
  std::set<int64_t> inputsMoved, outputsMoved;
  {
    auto key = [](const EdgeRow& e) { return std::tuple(e.consumerNode, e.consumerIndex, e.valueId); };
    std::set<std::tuple<int64_t, int64_t, int64_t>> gone, added;
    for (const auto& e : edgesGone) gone.insert(key(e));
    for (const auto& e : edgesNew) added.insert(key(e));
    for (auto& e : edgesGone)
      if (!added.count(key(e))) d.removedEdges.push_back(e);
    for (auto& e : edgesNew)
      if (!gone.count(key(e))) d.addedEdges.push_back(e);
    for (const auto* list : {&d.removedEdges, &d.addedEdges})
      for (const auto& e : *list) inputsMoved.insert(e.consumerNode);
  }
  // Values: both lists are sorted by id, so a merge pairs up the ids present on both sides.
  mergeById(valuesGone, valuesNew, d.removedValues, d.addedValues, [&](ValueRow& before, ValueRow& after) {
    if (!before.sameContent(after)) d.changedValues.push_back(ValueChange{std::move(before), std::move(after)});
  });
  for (const auto* list : {&d.addedValues, &d.removedValues})
    for (const auto& v : *list)
      if (v.producerNode) outputsMoved.insert(*v.producerNode);
  for (const auto& c : d.changedValues) {
    if (c.before.producerNode == c.after.producerNode && c.before.producerIndex == c.after.producerIndex) continue;
    if (c.before.producerNode) outputsMoved.insert(*c.before.producerNode);
    if (c.after.producerNode) outputsMoved.insert(*c.after.producerNode);
  }

  // Annotations: every node's changes of (a, b] (annotation-only changes, undone from the later side); the changes
  // before that only for the rows read raw from the table here, which need them applied.
  AnnotationLog log;
  loadAnnotationChanges(db_, runId, a, b, log);
  log.seal();
  std::set<int64_t> reversioned;
  for (const auto* rows : {&nodesGone, &nodesNew})
    for (const auto& r : *rows) reversioned.insert(r.id);
  std::vector<int64_t> edited;
  for (int64_t id : log.nodesEditedIn(a, b))
    if (!reversioned.count(id)) edited.push_back(id);
  std::set<int64_t> raw(inputsMoved.begin(), inputsMoved.end());
  raw.insert(outputsMoved.begin(), outputsMoved.end());
  for (const auto& r : nodesGone) raw.insert(r.id);
  if (!later) {
    for (const auto& r : nodesNew) raw.insert(r.id);
    raw.insert(edited.begin(), edited.end());
  }
  if (!raw.empty()) {
    loadAnnotationChanges(db_, runId, -1, a, log, [&](int64_t id) { return raw.count(id) > 0; });
    log.seal();
  }
  for (NodeRow& r : nodesGone) log.applyForward(r, a);
  if (!later)
    for (NodeRow& r : nodesNew) log.applyForward(r, b);

  // Nodes re-versioned in (a, b]: merged by id like the values.
  std::map<int64_t, size_t> changedAt;
  mergeById(nodesGone, nodesNew, d.removedNodes, d.addedNodes, [&](NodeRow& before, NodeRow& after) {
    if (before.sameContent(after)) return;
    changedAt[after.id] = d.changedNodes.size();
    d.changedNodes.push_back(compareNodes(std::move(before), std::move(after)));
  });
  // Nodes whose row stayed and whose annotations changed: the later side rewound to a.
  for (NodeRow& after : rowsAt(db_, ends, runId, b, edited, later)) {
    std::vector<std::string> keys = log.changedKeys(after.id, a, b);
    if (keys.empty()) continue;  // changed and changed back
    if (!later) log.applyForward(after, b);
    NodeChange c;
    c.before = after;
    log.rewind(c.before, a, b);
    c.after = std::move(after);
    c.annotations = std::move(keys);
    changedAt[c.after.id] = d.changedNodes.size();
    d.changedNodes.push_back(std::move(c));
  }

  std::set<int64_t> addedIds, removedIds;
  for (const auto& n : d.addedNodes) addedIds.insert(n.id);
  for (const auto& n : d.removedNodes) removedIds.insert(n.id);
  // A kept node whose inputs or outputs moved: its row is fetched at both passes (it may have changed and changed
  // back).
  auto flagNode = [&](int64_t id, bool inputs) {
    if (addedIds.count(id) || removedIds.count(id)) return;
    auto it = changedAt.find(id);
    if (it == changedAt.end()) {
      auto before = nodeAt(db_, ends, runId, id, a);
      auto after = nodeAt(db_, ends, runId, id, b);
      if (!before || !after) return;
      log.applyForward(*before, a);
      log.applyForward(*after, b);
      it = changedAt.emplace(id, d.changedNodes.size()).first;
      d.changedNodes.push_back(compareNodes(std::move(*before), std::move(*after)));
    }
    (inputs ? d.changedNodes[it->second].inputs : d.changedNodes[it->second].outputs) = true;
  };
  for (int64_t id : inputsMoved) flagNode(id, true);
  for (int64_t id : outputsMoved) flagNode(id, false);
  std::sort(d.changedNodes.begin(), d.changedNodes.end(),
            [](const NodeChange& x, const NodeChange& y) { return x.after.id < y.after.id; });
  return d;
}

}  // namespace kiln
