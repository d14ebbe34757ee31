#include "history/ge_dump_import.h"

#include <algorithm>
#include <filesystem>
#include <unordered_map>
#include <unordered_set>

#include "history/history_recorder.h"
#include "io/atc/fusion_result.h"
#include "io/gedump/dump_files.h"
#include "io/gedump/ge_dump_reader.h"
#include "ir/graph.h"
#include "ir/model.h"
#include "passes/pass_manager.h"
#include "util/json.h"
#include "util/load_error.h"

namespace kiln::gedump {
namespace {

namespace fs = std::filesystem;

std::unique_ptr<Model> readDump(const DumpFile& f, std::vector<std::string>& warnings) {
  const std::string text = readDumpText(f.path);
  std::vector<std::string> local;
  auto m = f.kind == DumpKind::GeProto ? readGeProtoDump(text, f.path, local) : readGeOnnxDump(text, f.path, local);
  for (std::string& w : local) warnings.push_back(fs::path(f.path).filename().string() + ": " + w);
  return m;
}

// GE's stage names say where in its pipeline a dump was taken.
Stage stageOf(const std::string& name, Stage previous) {
  auto has = [&](const char* s) { return name.find(s) != std::string::npos; };
  if (has("Build") || has("AssignResource") || has("Memory") || has("Task") || has("Stream")) return Stage::Compile;
  if (has("Optimize") || has("Fusion") || has("Fe") || has("UB")) return std::max(previous, Stage::Optimize);
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

  // A subgraph attribute: each body synced into the one the node holds at that place (by name), or into a new one.
  void syncSubgraphs(const std::string& name, const Attribute& from, Node& dst) {
    std::vector<Attribute::GraphPtr> src, have;
    if (const auto* one = from.get<Attribute::GraphPtr>()) src.push_back(*one);
    if (const auto* list = from.get<std::vector<Attribute::GraphPtr>>()) src = *list;
    const bool single = from.get<Attribute::GraphPtr>() != nullptr;
    if (const Attribute* mine = dst.attr(name)) {
      if (const auto* one = mine->get<Attribute::GraphPtr>()) have.push_back(*one);
      if (const auto* list = mine->get<std::vector<Attribute::GraphPtr>>()) have = *list;
    }
    std::vector<Attribute::GraphPtr> out;
    bool fresh = have.size() != src.size() || single != (dst.attr(name) && dst.attr(name)->get<Attribute::GraphPtr>());
    for (size_t k = 0; k < src.size(); ++k) {
      if (!src[k]) continue;
      Attribute::GraphPtr body = k < have.size() && have[k] && have[k]->name() == src[k]->name() ? have[k] : nullptr;
      if (!body) {
        body = g_.makeSubgraph(src[k]->name());
        fresh = true;
      }
      GraphSync(*body, *src[k]).run();
      out.push_back(std::move(body));
    }
    if (!fresh) return;
    if (single && out.size() == 1) dst.setAttr(name, Attribute(std::move(out.front())));
    else dst.setAttr(name, Attribute(std::move(out)));
  }

  void syncAttributes(const Node& src, Node& dst) {
    for (const NamedAttribute& a : src.attributes()) {
      if (a.value.get<Attribute::GraphPtr>() || a.value.get<std::vector<Attribute::GraphPtr>>()) {
        syncSubgraphs(a.name, a.value, dst);
        continue;
      }
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

std::vector<size_t> fusionEntriesFor(const atc::FusionResult& report, const std::string& graphId) {
  std::vector<size_t> out;
  std::unordered_set<std::string> graphs;
  for (size_t i = 0; i < report.passes.size(); ++i) {
    const std::string& g = report.passes[i].graph;
    graphs.insert(g);
    const size_t us = g.rfind('_');
    const std::string id = us == std::string::npos ? g : g.substr(us + 1);
    if (!graphId.empty() && id == graphId) out.push_back(i);
  }
  if (out.empty() && graphId.empty() && graphs.size() == 1)
    for (size_t i = 0; i < report.passes.size(); ++i) out.push_back(i);
  return out;
}

ImportResult importDumps(const std::vector<std::string>& paths, HistoryDb& db, const std::string& fusionResult) {
  ImportResult result;
  DumpListing listing = listDumps(paths);
  for (const std::string& s : listing.skipped) result.warnings.push_back("skipped " + s);
  // The fusion report: the one named, else a fusion_result.json among the files beside the dumps.
  std::optional<atc::FusionResult> report;
  std::string reportPath = fusionResult;
  if (reportPath.empty())
    for (const std::string& o : listing.others) {
      const std::string name = fs::path(o).filename().string();
      if (name.find("fusion_result") != std::string::npos && name.ends_with(".json")) {
        if (!reportPath.empty()) {
          result.warnings.push_back("several fusion_result files beside the dumps; " + reportPath + " is attached");
          break;
        }
        reportPath = o;
      }
    }
  if (!reportPath.empty()) {
    report = atc::readFusionResult(reportPath);
    for (const std::string& w : report->warnings) result.warnings.push_back(reportPath + ": " + w);
  }

  for (const DumpGroup& group : listing.groups) {
    const std::vector<DumpFile>& files = group.files;
    std::unique_ptr<Model> model = readDump(files[0], result.warnings);
    HistoryRecorder recorder(db, files.back().path);
    Json options = Json::object();
    options.set("source", "GE graph dumps");
    options.set("graph", group.label);
    options.set("folder", group.folder);
    options.set("first_stage", files[0].stage);
    if (report) options.set("fusion_result", reportPath);
    recorder.startRun(*model, options);
    RunSummary summary;
    summary.nodesBefore = int64_t(model->graph->numNodesRecursive());
    Stage stage = stageOf(files[0].stage, Stage::Prepare);
    int index = 0;
    for (size_t i = 1; i < files.size(); ++i) {
      const std::unique_ptr<Model> next = readDump(files[i], result.warnings);
      PassRecord r;
      r.index = ++index;
      r.name = files[i].stage;
      r.stage = stage = stageOf(files[i].stage, stage);
      r.nodesBefore = int64_t(model->graph->numNodesRecursive());
      GraphSync(*model->graph, *next->graph).run();
      model->metadata = next->metadata;
      r.nodesAfter = int64_t(model->graph->numNodesRecursive());
      r.changed = true;
      recorder.afterPass(r, *model);
      summary.passes.push_back(r);
    }
    ImportedRun run;
    if (report) {
      const std::string id = files[0].graphId;
      const std::vector<size_t> entries = fusionEntriesFor(*report, id);
      for (const char* kind : {"graph", "ub"}) {
        PassRecord r;
        r.name = std::string(kind) == "graph" ? kAtcGraphFusionPass : kAtcUbFusionPass;
        r.stage = Stage::Optimize;
        r.nodesBefore = r.nodesAfter = int64_t(model->graph->numNodesRecursive());
        for (size_t e : entries) {
          const atc::FusionPassCount& p = report->passes[e];
          if (p.kind != kind) continue;
          r.counters[p.pass] += p.effect;
          r.counters[p.pass + ".matched"] += p.match;
          ++run.fusionPasses;
        }
        if (r.counters.empty()) continue;
        r.index = ++index;
        recorder.afterPass(r, *model);
        summary.passes.push_back(r);
      }
      if (entries.empty())
        result.warnings.push_back(reportPath + " names no graph " + (id.empty() ? std::string("of these dumps") : id) +
                                  ": not attached to " + group.label);
    }
    summary.nodesAfter = int64_t(model->graph->numNodesRecursive());
    recorder.runFinished(summary, *model);
    if (!recorder.error().empty()) throw LoadError(group.folder, "history: " + recorder.error());
    run.runId = recorder.runId();
    run.label = group.label;
    run.stages = int(files.size());
    run.lastFile = files.back().path;
    result.runs.push_back(std::move(run));
  }
  return result;
}

}  // namespace kiln::gedump
