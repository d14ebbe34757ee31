#include "history/ge_dump_import.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "history/history_recorder.h"
#include "util/load_error.h"
#include "io/om/om_reader.h"
#include "ir/graph.h"
#include "ir/model.h"
#include "passes/pass_manager.h"
#include "util/json.h"

namespace kiln::gedump {
namespace {

namespace fs = std::filesystem;

constexpr uintmax_t kMaxDumpBytes = uintmax_t{512} << 20;  // one stage's text; real dumps without weights are far smaller
constexpr size_t kMaxDumpFiles = 100000;

// "ge_proto_00000012_graph_0_PreRunAfterPrepare.txt" -> {12, "0", "PreRunAfterPrepare"}
std::optional<DumpFile> parseName(const fs::path& p) {
  const std::string name = p.filename().string();
  const std::string prefix = "ge_proto_", suffix = ".txt";
  if (!name.starts_with(prefix) || !name.ends_with(suffix)) return std::nullopt;
  const std::string_view rest(name.data() + prefix.size(), name.size() - prefix.size() - suffix.size());
  if (rest.size() < 8 + 7) return std::nullopt;
  DumpFile f;
  auto [end, ec] = std::from_chars(rest.data(), rest.data() + 8, f.counter);
  if (ec != std::errc() || end != rest.data() + 8 || rest.substr(8, 7) != "_graph_") return std::nullopt;
  const std::string_view tail = rest.substr(15);
  const size_t us = tail.find('_');
  if (us == std::string_view::npos || us == 0 || us + 1 >= tail.size()) return std::nullopt;
  f.graphId = std::string(tail.substr(0, us));
  f.stage = std::string(tail.substr(us + 1));
  f.path = p.string();
  return f;
}

std::string readText(const DumpFile& f) {
  std::error_code ec;
  const uintmax_t size = fs::file_size(f.path, ec);
  if (ec) throw LoadError(f.path, "cannot read: " + ec.message());
  if (size > kMaxDumpBytes) throw LoadError(f.path, "dump of " + std::to_string(size) + " bytes is larger than the "
                                                        "512 MiB Kiln reads per stage");
  std::ifstream in(f.path, std::ios::binary);
  std::string text(static_cast<size_t>(size), '\0');
  if (!in.read(text.data(), std::streamsize(size))) throw LoadError(f.path, "cannot read");
  return text;
}

// GE's stage names say where in its pipeline a dump was taken.
Stage stageOf(const std::string& name, Stage previous) {
  auto has = [&](const char* s) { return name.find(s) != std::string::npos; };
  if (has("Build") || has("AssignResource") || has("Memory") || has("Task") || has("Stream")) return Stage::Compile;
  if (has("Optimize") || has("Fusion") || has("Fe")) return std::max(previous, Stage::Optimize);
  return previous;
}

// Brings `g` (the run's graph) to the content of `next`, keeping the ids of ops that survive by name and type.
class GraphSync {
 public:
  GraphSync(Graph& g, const Graph& next) : g_(g), next_(next) {}

  void run() {
    std::unordered_map<std::string, Node*> byName;
    for (Node* n : g_.nodes()) byName.emplace(n->name(), n);
    std::unordered_set<Node*> kept;
    // 1. Every op of `next`: the surviving node, or a new one.
    for (const Node* src : next_.nodes()) {
      auto it = byName.find(src->name());
      Node* dst = it != byName.end() && !kept.count(it->second) && it->second->qualifiedType() == src->qualifiedType() &&
                          it->second->numOutputs() == src->numOutputs()
                      ? it->second
                      : g_.addNode(src->opType(), {}, src->numOutputs(), src->name(), src->domain());
      kept.insert(dst);
      nodeMap_[src] = dst;
      for (size_t i = 0; i < src->numOutputs(); ++i)
        if (src->output(i) && dst->output(i)) {
          valueMap_[src->output(i)] = dst->output(i);
          if (!(dst->output(i)->type() == src->output(i)->type())) dst->output(i)->setType(src->output(i)->type());
          if (dst->output(i)->name() != src->output(i)->name()) dst->output(i)->setName(src->output(i)->name());
        }
      syncAttributes(*src, *dst);
    }
    // 2. Edges, graph inputs and outputs, in `next`'s terms.
    for (const Node* src : next_.nodes()) {
      std::vector<Value*> ins;
      for (const Value* v : src->inputs()) ins.push_back(v ? map(v) : nullptr);
      Node* dst = nodeMap_.at(src);
      if (ins != dst->inputs()) g_.setNodeInputs(dst, ins);
    }
    std::vector<Value*> outs;
    for (const Value* v : next_.outputs()) outs.push_back(map(v));
    g_.setOutputs(outs);
    // 3. What `next` no longer has: consumers first, so every erased node's outputs are unused by then.
    std::vector<Node*> gone;
    for (Node* n : g_.nodes())
      if (!kept.count(n)) gone.push_back(n);
    for (auto it = gone.rbegin(); it != gone.rend(); ++it) {
      for (size_t i = 0; i < (*it)->numInputs(); ++i) g_.setNodeInput(*it, i, nullptr);
    }
    for (Node* n : gone) g_.eraseNode(n);
    // 4. `next`'s order.
    for (const Node* src : next_.nodes()) g_.moveBefore(nodeMap_.at(src), nullptr);
    for (Value* in : std::vector<Value*>(g_.inputs()))
      if (!usedInputs_.count(in) && !in->hasUses() && !in->isGraphOutput()) {
        g_.removeInput(in);
        g_.eraseValue(in);
      }
  }

 private:
  Value* map(const Value* v) {
    if (auto it = valueMap_.find(v); it != valueMap_.end()) return it->second;
    // A graph input of `next` (ops read Data's output, but be general): matched by name.
    for (Value* in : g_.inputs())
      if (in->name() == v->name()) return valueMap_[v] = in;
    Value* in = g_.addInput(v->name(), v->type());
    usedInputs_.insert(in);
    return valueMap_[v] = in;
  }

  static void syncAttributes(const Node& src, Node& dst) {
    for (const NamedAttribute& a : src.attributes()) {
      if (a.value.get<Attribute::GraphPtr>() || a.value.get<std::vector<Attribute::GraphPtr>>()) continue;
      const Attribute* mine = dst.attr(a.name);
      if (!mine || !(*mine == a.value)) dst.setAttr(a.name, a.value);
    }
    std::vector<std::string> stale;
    for (const NamedAttribute& a : dst.attributes())
      if (!src.attr(a.name)) stale.push_back(a.name);
    for (const std::string& k : stale) dst.removeAttr(k);
    for (const auto& [k, v] : src.annotations())
      if (dst.annotation(k) != v) dst.setAnnotation(k, v);
    std::vector<std::string> staleNotes;
    for (const auto& [k, v] : dst.annotations())
      if (!src.annotations().count(k)) staleNotes.push_back(k);
    for (const std::string& k : staleNotes) dst.eraseAnnotation(k);
  }

  Graph& g_;
  const Graph& next_;
  std::unordered_map<const Node*, Node*> nodeMap_;
  std::unordered_map<const Value*, Value*> valueMap_;
  std::unordered_set<Value*> usedInputs_;
};

}  // namespace

std::vector<DumpFile> listDumps(const std::string& dir, std::vector<std::string>* skipped) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw LoadError(dir, "is not a folder of GE graph dumps");
  std::map<std::string, std::vector<DumpFile>> byGraph;
  size_t seen = 0;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (++seen > kMaxDumpFiles) throw LoadError(dir, "more than 100000 files: not a dump folder Kiln reads");
    if (auto f = parseName(it->path()); f && it->is_regular_file(ec)) byGraph[f->graphId].push_back(*f);
  }
  if (ec) throw LoadError(dir, "cannot list: " + ec.message());
  if (byGraph.empty()) throw LoadError(dir, "holds no ge_proto_<counter>_graph_<id>_<Stage>.txt dumps");
  auto best = std::max_element(byGraph.begin(), byGraph.end(),
                               [](const auto& a, const auto& b) { return a.second.size() < b.second.size(); });
  std::vector<DumpFile> files = best->second;
  std::sort(files.begin(), files.end(), [](const DumpFile& a, const DumpFile& b) { return a.counter < b.counter; });
  for (size_t i = 1; i < files.size(); ++i)
    if (files[i].counter == files[i - 1].counter)
      throw LoadError(files[i].path, "has the same counter as " + files[i - 1].path);
  if (skipped)
    for (const auto& [id, list] : byGraph)
      if (id != best->first)
        skipped->push_back(std::to_string(list.size()) + " dumps of graph " + id + " not imported (graph " +
                           best->first + " has the most)");
  return files;
}

ImportResult importDumps(const std::string& dir, HistoryDb& db) {
  ImportResult result;
  const std::vector<DumpFile> files = listDumps(dir, &result.warnings);
  std::unique_ptr<Model> model = om::readGeProtoText(readText(files[0]), files[0].path, result.warnings);
  HistoryRecorder recorder(db, dir);
  Json options = Json::object();
  options.set("source", "GE graph dumps");
  options.set("graph", files[0].graphId);
  recorder.startRun(*model, options);
  RunSummary summary;
  summary.nodesBefore = int64_t(model->graph->numNodesRecursive());
  Stage stage = Stage::Prepare;
  for (size_t i = 1; i < files.size(); ++i) {
    const std::unique_ptr<Model> next = om::readGeProtoText(readText(files[i]), files[i].path, result.warnings);
    PassRecord r;
    r.index = int(i);
    r.name = files[i].stage;
    r.stage = stage = stageOf(files[i].stage, stage);
    r.nodesBefore = int64_t(model->graph->numNodesRecursive());
    GraphSync(*model->graph, *next->graph).run();
    r.nodesAfter = int64_t(model->graph->numNodesRecursive());
    r.changed = true;
    recorder.afterPass(r, *model);
    summary.passes.push_back(r);
  }
  summary.nodesAfter = int64_t(model->graph->numNodesRecursive());
  recorder.runFinished(summary, *model);
  if (!recorder.error().empty()) throw LoadError(dir, "history: " + recorder.error());
  result.runId = recorder.runId();
  result.passes = int(files.size()) - 1;
  return result;
}

}  // namespace kiln::gedump
