#include "history/measured_import.h"

#include <map>
#include <unordered_map>

#include "history/history_reader.h"
#include "history/history_recorder.h"
#include "history/measured_tasks.h"
#include "io/msprof/measured_tensors.h"
#include "io/om/ge_model_builder.h"
#include "io/om/om_writer.h"
#include "ir/graph.h"
#include "ir/model.h"
#include "passes/pass_manager.h"
#include "util/json.h"
#include "util/load_error.h"

namespace kiln {

namespace {

// A profile with more distinct ops than this becomes a run whose graph holds the first ones (the rest stay tasks).
constexpr size_t kMaxOwnRunNodes = 50000;

MeasuredRun rowsOf(const msprof::MeasuredProfile& p) {
  MeasuredRun m;
  m.profile.source = p.source;
  m.profile.tasksFile = p.tasksFile;
  m.profile.importedAt = nowIso();
  m.profile.skippedRows = static_cast<int64_t>(p.skippedRows);
  m.profile.staticTotalBytes = p.staticMemoryTotalBytes;
  int64_t i = 0;
  for (const msprof::MeasuredTask& t : p.tasks) {
    MeasuredTaskRow r;
    r.task = i++;
    r.name = t.name;
    r.opType = t.opType;
    r.taskType = t.taskType;
    r.stream = t.stream;
    r.startUs = static_cast<double>(t.startNs) / 1000.0;
    r.durationUs = t.durationUs;
    r.waitUs = t.waitUs;
    r.blockDim = t.blockDim;
    r.inputShapes = t.inputShapes;
    r.inputTypes = t.inputTypes;
    r.outputShapes = t.outputShapes;
    r.outputTypes = t.outputTypes;
    m.tasks.push_back(std::move(r));
  }
  int64_t seq = 0;
  for (const msprof::StaticOpMemory& s : p.staticMemory)
    m.staticMemory.push_back({seq++, s.opName, s.graph, s.bytes, s.nodeStart, s.nodeEnd});
  return m;
}

std::vector<std::string> originalNamesOf(const NodeRow& n) {
  std::vector<std::string> names;
  try {
    const Json a = Json::parse(n.annotationsJson.empty() ? std::string("{}") : n.annotationsJson, 8);
    const Json* v = a.isObject() ? a.find("fusion.original_names") : nullptr;
    if (!v || !v->isString()) return names;
    const Json list = Json::parse(v->asString(), 4);
    if (list.isArray())
      for (const Json& x : list.asArray())
        if (x.isString()) names.push_back(x.asString());
  } catch (const JsonError&) {
  }
  return names;
}

// Matches tasks to the nodes of `g` (see the header), filling nodeId and matchedBy.
void match(MeasuredRun& m, const GraphSnapshot& g, MeasuredImportResult& r) {
  std::unordered_map<std::string, int64_t> byName, byOriginal;
  std::map<std::pair<std::string, std::string>, std::vector<int64_t>> byTypeShape;  // (GE type, output shape)
  std::unordered_map<int64_t, const ValueRow*> firstOutput, firstInput;
  std::unordered_map<int64_t, int64_t> inputRank;
  for (const ValueRow& v : g.values)
    if (v.producerNode && v.producerIndex && *v.producerIndex == 0) firstOutput[*v.producerNode] = &v;
  for (const NodeRow& n : g.nodes) {
    if (n.domain == om::kGeDomain && (n.opType == "Data" || n.opType == "Const" || n.opType == "NetOutput")) continue;
    byName.emplace(n.name, n.id);
    for (const std::string& o : originalNamesOf(n)) byOriginal.emplace(o, n.id);
    const ValueRow* out = firstOutput.count(n.id) ? firstOutput[n.id] : nullptr;
    // GE's name for the node's type: a GE op keeps its own; Kiln's by the .om writer's table (rank from the output,
    // which for the matrix products GE renames decides MatMulV2 against BatchMatMulV2 as the input's would).
    const std::string qualified = n.domain.empty() ? n.opType : n.domain + ":" + n.opType;
    size_t rank = 0;
    if (out && out->shape && *out->shape != "scalar" && !out->shape->empty()) {
      rank = 1;
      for (size_t at = out->shape->find("\u00d7"); at != std::string::npos; at = out->shape->find("\u00d7", at + 1)) ++rank;
    }
    const std::string geType = n.domain == om::kGeDomain ? n.opType : [&] {
      const std::string t = om::geOpType(qualified, rank);
      return t.empty() ? qualified : t;
    }();
    byTypeShape[{geType, out && out->shape ? *out->shape : std::string()}].push_back(n.id);
  }
  std::map<std::pair<std::string, std::string>, size_t> seen;
  for (MeasuredTaskRow& t : m.tasks) {
    if (auto it = byName.find(t.name); it != byName.end()) {
      t.nodeId = it->second;
      t.matchedBy = "name";
      ++r.byName;
      continue;
    }
    if (auto it = byOriginal.find(t.name); it != byOriginal.end()) {
      t.nodeId = it->second;
      t.matchedBy = "original name";
      ++r.byOriginalName;
      continue;
    }
    const std::pair<std::string, std::string> key{t.opType, msprof::firstShapeText(t.outputShapes)};
    if (auto it = byTypeShape.find(key); it != byTypeShape.end() && !key.second.empty()) {
      const size_t k = seen[key]++;
      t.nodeId = it->second[k % it->second.size()];
      t.matchedBy = "type and shape";
      ++r.byTypeAndShape;
      continue;
    }
    ++r.unmatched;
  }
}

// The run of a profile imported on its own: one node per distinct op name, in order of first start.
int64_t recordOwnRun(HistoryDb& db, const msprof::MeasuredProfile& p, MeasuredImportResult& r) {
  Model model;
  Graph& g = *model.graph;
  std::unordered_map<std::string, bool> made;
  for (const msprof::MeasuredTask& t : p.tasks) {
    if (made.count(t.name)) continue;
    if (made.size() >= kMaxOwnRunNodes) {
      r.notes.push_back("the run's graph holds the first " + std::to_string(kMaxOwnRunNodes) + " ops only");
      break;
    }
    made[t.name] = true;
    Node* n = g.addNode(t.opType.empty() ? std::string("Unknown") : t.opType, {}, 1, t.name, om::kGeDomain);
    std::string why;
    if (auto types = msprof::tensorTypes(t.outputShapes, t.outputTypes, t.outputFormats, "output", why);
        types && !types->empty())
      n->output(0)->setType(types->front());
    n->setAnnotation("task_type", t.taskType);
    n->setAnnotation("stream", std::to_string(t.stream));
  }
  HistoryRecorder recorder(db, p.source);
  Json options = Json::object();
  options.set("source", kMeasuredRunSource);
  options.set("tasks_file", p.tasksFile);
  recorder.startRun(model, options);
  RunSummary summary;
  summary.nodesBefore = summary.nodesAfter = int64_t(g.numNodesRecursive());
  recorder.runFinished(summary, model);
  if (!recorder.error().empty()) throw LoadError(p.source, "history: " + recorder.error());
  return recorder.runId();
}

}  // namespace

MeasuredImportResult importMeasuredProfile(HistoryDb& db, const msprof::MeasuredProfile& profile,
                                           std::optional<int64_t> runId) {
  if (profile.tasks.empty()) throw LoadError(profile.source, "the profile holds no measured tasks");
  MeasuredImportResult r;
  r.tasks = static_cast<int64_t>(profile.tasks.size());
  MeasuredRun m = rowsOf(profile);
  r.staticMemoryRows = static_cast<int64_t>(m.staticMemory.size());
  if (!runId) {
    r.runId = recordOwnRun(db, profile, r);
    r.newRun = true;
  } else {
    r.runId = *runId;
  }
  HistoryReader reader(db);
  const RunInfo run = reader.run(r.runId);  // HistoryError for an unknown run
  if (run.lastPass < 0) throw HistoryError("run " + std::to_string(r.runId) + " recorded no graph to match tasks to");
  match(m, reader.graphAt(r.runId, run.lastPass), r);
  writeMeasuredRun(db, r.runId, m);
  if (r.unmatched)
    r.notes.push_back(std::to_string(r.unmatched) + " of " + std::to_string(r.tasks) +
                      " tasks match no node of run " + std::to_string(r.runId) + "'s last graph");
  return r;
}

}  // namespace kiln
