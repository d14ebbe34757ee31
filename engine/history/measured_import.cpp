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

// The ids a fused node replaced (its "fusion.replaced" annotation: "12,13,14"), in the order the fusion listed them.
std::vector<int64_t> replacedIdsOf(const NodeRow& n) {
  std::vector<int64_t> ids;
  try {
    const Json a = Json::parse(n.annotationsJson.empty() ? std::string("{}") : n.annotationsJson, 8);
    const Json* v = a.isObject() ? a.find("fusion.replaced") : nullptr;
    if (!v || !v->isString()) return ids;
    const std::string& text = v->asString();
    size_t at = 0;
    while (at < text.size() && ids.size() < 4096) {
      size_t used = 0;
      try {
        ids.push_back(std::stoll(text.substr(at), &used));
      } catch (const std::exception&) {
        break;
      }
      at += used;
      while (at < text.size() && (text[at] == ',' || text[at] == ' ')) ++at;
    }
  } catch (const JsonError&) {
  }
  return ids;
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

std::vector<int64_t> dimsOf(const std::string& shapeText) {
  std::vector<int64_t> dims;
  if (shapeText.empty() || shapeText == "scalar") return dims;
  size_t at = 0;
  while (at <= shapeText.size()) {
    const size_t next = shapeText.find("\u00d7", at);
    const std::string d = shapeText.substr(at, next == std::string::npos ? std::string::npos : next - at);
    if (d.empty() || d.size() > 12 || d.find_first_not_of("0123456789") != std::string::npos) return {};  // symbolic
    dims.push_back(std::stoll(d));
    if (next == std::string::npos) break;
    at = next + std::string("\u00d7").size();
  }
  return dims;
}

// A logical shape laid out as the node's output is: FRACTAL_NZ (..., N1, M1, M0, N0) and NC1HWC0 (N, C1, H, W, C0)
// with the block sizes the physical shape shows; other formats unchanged.
std::vector<int64_t> blockedAs(const std::vector<int64_t>& logical, const std::string& format,
                               const std::vector<int64_t>& physical) {
  auto up = [](int64_t x, int64_t b) { return b > 0 ? (x + b - 1) / b : x; };
  if (format == "FRACTAL_NZ" && logical.size() >= 2 && physical.size() == logical.size() + 2) {
    std::vector<int64_t> b(logical.begin(), logical.end() - 2);
    const int64_t m0 = physical[physical.size() - 2], n0 = physical.back();
    b.insert(b.end(), {up(logical.back(), n0), up(logical[logical.size() - 2], m0), m0, n0});
    return b;
  }
  if (format == "NC1HWC0" && logical.size() == 4 && physical.size() == 5)
    return {logical[0], up(logical[1], physical[4]), logical[2], logical[3], physical[4]};
  return logical;
}

// A node of the run's last graph as a task of a type and shape may have run it.
struct Candidate {
  int64_t id = 0;
  std::vector<int64_t> logical;   // from the imported graph, when static there
  std::vector<int64_t> physical;  // as the last graph holds it
  std::string format;
};

// Matches tasks to the nodes of `g` (see the header), filling nodeId and matchedBy. A profile records logical shapes
// ("32,1024"); a compiled graph may hold a tensor blocked (FRACTAL_NZ 64×2×16×16): a node matches when the imported
// graph (`imported`, pass 0) had its output at the task's shape, or when the task's shape blocked as the node's
// output is laid out is the shape it has.
void match(MeasuredRun& m, const GraphSnapshot& g, const GraphSnapshot& imported, MeasuredImportResult& r) {
  std::unordered_map<int64_t, const ValueRow*> importedValue, importedOutput;  // by value id, by producer
  for (const ValueRow& v : imported.values) {
    importedValue[v.id] = &v;
    if (v.producerNode && v.producerIndex && *v.producerIndex == 0) importedOutput[*v.producerNode] = &v;
  }
  std::unordered_map<std::string, int64_t> byName, byOriginal;
  std::map<std::string, std::vector<Candidate>> byType;  // GE's type -> nodes in graph order
  std::unordered_map<int64_t, const ValueRow*> firstOutput;
  for (const ValueRow& v : g.values)
    if (v.producerNode && v.producerIndex && *v.producerIndex == 0) firstOutput[*v.producerNode] = &v;
  for (const NodeRow& n : g.nodes) {
    if (n.domain == om::kGeDomain && (n.opType == "Data" || n.opType == "Const" || n.opType == "NetOutput")) continue;
    byName.emplace(n.name, n.id);
    for (const std::string& o : originalNamesOf(n)) byOriginal.emplace(o, n.id);
    Candidate c;
    c.id = n.id;
    const ValueRow* out = firstOutput.count(n.id) ? firstOutput[n.id] : nullptr;
    if (out && out->shape) {
      c.physical = dimsOf(*out->shape);
      c.format = out->format;
    }
    // The same tensor in the imported graph: the value itself, or for a fused node's new output the output of the
    // last op it replaced.
    const ValueRow* before = out && importedValue.count(out->id) ? importedValue[out->id] : nullptr;
    if (!before) {
      const std::vector<int64_t> replaced = replacedIdsOf(n);
      for (auto id = replaced.rbegin(); id != replaced.rend() && !before; ++id)
        if (importedOutput.count(*id)) before = importedOutput[*id];
    }
    if (before && before->shape) c.logical = dimsOf(*before->shape);
    // GE's name for the node's type: a GE op keeps its own; Kiln's by the .om writer's table, at the logical rank
    // (which for the matrix products GE renames decides MatMulV2 against BatchMatMulV2).
    const size_t rank = !c.logical.empty() ? c.logical.size()
                        : c.format == "FRACTAL_NZ" && c.physical.size() >= 4 ? c.physical.size() - 2
                        : c.format == "NC1HWC0" && c.physical.size() == 5   ? 4
                                                                             : c.physical.size();
    const std::string qualified = n.domain.empty() ? n.opType : n.domain + ":" + n.opType;
    const std::string geType = n.domain == om::kGeDomain ? n.opType : [&] {
      const std::string t = om::geOpType(qualified, rank);
      return t.empty() ? qualified : t;
    }();
    byType[geType].push_back(std::move(c));
  }
  // (type, shape) -> the nodes it matches, worked out once per distinct task kind.
  std::map<std::pair<std::string, std::string>, std::vector<int64_t>> matches;
  auto candidatesFor = [&](const std::string& type, const std::string& shapes) -> const std::vector<int64_t>& {
    auto [it, fresh] = matches.try_emplace({type, shapes});
    if (!fresh) return it->second;
    const auto parsed = msprof::parseShapeList(shapes);
    if (!parsed || parsed->empty()) return it->second;
    const std::vector<int64_t>& want = parsed->front();
    if (auto nodes = byType.find(type); nodes != byType.end())
      for (const Candidate& c : nodes->second)
        if ((!c.logical.empty() && c.logical == want) ||
            (!c.physical.empty() && blockedAs(want, c.format, c.physical) == c.physical))
          it->second.push_back(c.id);
    return it->second;
  };
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
    const std::pair<std::string, std::string> key{t.opType, t.outputShapes};
    if (const std::vector<int64_t>& nodes = candidatesFor(t.opType, t.outputShapes); !nodes.empty()) {
      const size_t k = seen[key]++;
      t.nodeId = nodes[k % nodes.size()];
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
  match(m, reader.graphAt(r.runId, run.lastPass), reader.graphAt(r.runId, 0), r);
  writeMeasuredRun(db, r.runId, m);
  if (r.unmatched)
    r.notes.push_back(std::to_string(r.unmatched) + " of " + std::to_string(r.tasks) +
                      " tasks match no node of run " + std::to_string(r.runId) + "'s last graph");
  return r;
}

}  // namespace kiln
