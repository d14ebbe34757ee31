#include "report/compile_summary.h"

#include <set>
#include <vector>

#include "ir/graph.h"
#include "ir/model.h"
#include "ir/model_metadata.h"
#include "memory/lifetimes.h"
#include "memory/memory_plan.h"
#include "io/om/om_writer.h"
#include "report/memory_chart.h"
#include "passes/optimize/optimize_passes.h"
#include "passes/pass_manager.h"
#include "schedule/sync_events.h"
#include "util/json_fields.h"
#include "util/units.h"

namespace kiln {

namespace {
// The fusion drivers (fusion/graph_fusion_pass.h): their counters are rule names, plus the bytes saved. ATC's report
// attached to an imported GE run comes as passes "ATC:graph_fusion" / "ATC:ub_fusion" (history/ge_dump_import.h),
// whose counters are each GE pass's effect_times (and "<pass>.matched").
bool isFusionPass(const std::string& name) {
  return name == "GraphFusion" || name == "UBFusion" || name == "ATC:graph_fusion" || name == "ATC:ub_fusion";
}

bool isStructural(const Node& n) {
  if (n.domain() != "ge") return false;
  const std::string& t = n.opType();
  return t == "Data" || t == "Const" || t == "Constant" || t == "NetOutput";
}

// GE's fused ops name the pass that fused them (pass_name) and the framework ops they absorbed.
std::map<std::string, int64_t> geFusedOps(const Graph& g) {
  std::map<std::string, int64_t> fused;
  for (const Node* n : g.nodes()) {
    const std::string pass = n->attrString("pass_name", "");
    const Attribute* names = n->attr("_datadump_original_op_names");
    const auto* list = names ? names->get<std::vector<std::string>>() : nullptr;
    if (!pass.empty()) ++fused[pass];
    else if (list && list->size() > 1 && !n->attr("_kiln.op_type")) ++fused["(pass not recorded)"];
  }
  return fused;
}

// A compiled file (.om) ran no pass to count for it: the arena and lower bound are those of the plan it carries (the
// memory chart's, over the offsets it gives its tensors; its memory_size also holds the zero-copy inputs and
// outputs), the no-reuse sum is over the same aligned blocks, weights and tasks are the file's own totals.
void summarizePrecompiled(const Model& compiled, CompileSummary& s) {
  const MemoryChart chart = buildMemoryChart(*compiled.graph);
  s.arenaBytes = chart.arenaBytes;
  s.lowerBoundBytes = chart.lowerBound;
  s.unsizedTensors = chart.unsized;
  const memory::Lifetimes life = memory::computeLifetimes(*compiled.graph);
  for (const memory::Buffer& b : memory::alignedBlocks(life)) s.noReuseBytes += b.size;
  s.weightBytes = int64_t(metadataU64(compiled, "om.weight_size"));
  if (s.weightBytes == 0) s.weightBytes = life.weightBytes;
  s.ioBytes = life.ioBytes;
  s.tasks = int64_t(metadataU64(compiled, "om.task_num"));
  if (s.tasks == 0) s.tasks = -1;  // a graph dump or om JSON: GE's task list is not in the file
  s.built = true;
}
}  // namespace

CompileSummary summarizeCompile(const Model& compiled, const RunSummary& run) {
  CompileSummary s;
  for (const PassRecord& p : run.passes)
    if (isFusionPass(p.name))
      for (const auto& [k, v] : p.counters)
        if (k != "hbm_bytes_saved" && !k.ends_with(".matched") && v > 0) s.fused[k] += v;
  s.transdata = countTransData(compiled);
  compiled.graph->forEachGraph([&](const Graph& g) {
    for (const Node* n : g.nodes()) {
      if (isStructural(*n)) continue;
      if (n->domain() == "ge" && n->opType() == "TransData") ++s.transdata;
      ++s.ops[om::geVocabularyType(*n)];
    }
  });
  bool kilnWritten = false;
  for (const Node* n : compiled.graph->nodes()) kilnWritten = kilnWritten || n->attr("_kiln.op_type");
  s.byGe = compiled.precompiled && !kilnWritten;
  if (s.byGe && s.fused.empty()) s.fused = geFusedOps(*compiled.graph);
  const std::vector<Node*> order(compiled.graph->nodes().begin(), compiled.graph->nodes().end());
  std::set<int> streams;
  for (const auto& [n, stream] : streamsFromAnnotations(order)) streams.insert(stream);
  s.streams = static_cast<int64_t>(streams.size());
  s.events = static_cast<int64_t>(eventsFromAnnotations(order).size());
  auto counter = [](const PassRecord& p, const char* k) {
    auto it = p.counters.find(k);
    return it == p.counters.end() ? int64_t{0} : it->second;
  };
  bool memory = false, tasks = false;
  for (const PassRecord& p : run.passes) {
    if (p.name == "MemoryAssignment") {
      memory = true;
      s.arenaBytes = counter(p, "memory_size");
      s.lowerBoundBytes = counter(p, "lower_bound");
      s.noReuseBytes = counter(p, "no_reuse_bytes");
      s.weightBytes = counter(p, "weight_bytes");
      s.ioBytes = counter(p, "io_bytes");
      s.unsizedTensors = counter(p, "unsized");
    }
    if (p.name == "TaskGeneration") {
      tasks = true;
      s.tasks = counter(p, "tasks");
    }
  }
  s.built = memory && tasks;
  if (compiled.precompiled) summarizePrecompiled(compiled, s);
  return s;
}

Json compileSummaryToJson(const CompileSummary& s) {
  Json j = Json::object();
  Json fused = Json::object();
  for (const auto& [rule, n] : s.fused) fused.set(rule, n);
  j.set("fused", std::move(fused));
  Json ops = Json::object();
  for (const auto& [op, n] : s.ops) ops.set(op, n);
  j.set("ops", std::move(ops));
  if (s.byGe) j.set("by_ge", true);
  j.set("transdata", s.transdata);
  j.set("streams", s.streams);
  j.set("events", s.events);
  if (s.built) {
    j.set("arena_bytes", s.arenaBytes);
    j.set("lower_bound_bytes", s.lowerBoundBytes);
    j.set("no_reuse_bytes", s.noReuseBytes);
    j.set("weight_bytes", s.weightBytes);
    j.set("io_bytes", s.ioBytes);
    j.set("unsized_tensors", s.unsizedTensors);
    j.set("tasks", s.tasks >= 0 ? Json(s.tasks) : Json());  // null: not recorded
  }
  return j;
}

CompileSummary compileSummaryFromJson(const Json& j) {
  CompileSummary s;
  if (const Json* fused = j.find("fused"); fused && !fused->isNull())
    for (const auto& [rule, n] : jsonObject(*fused, "'fused'")) s.fused[rule] = jsonCount(*fused, rule);
  if (const Json* ops = j.find("ops"); ops && !ops->isNull())  // absent in summaries written before it was
    for (const auto& [op, n] : jsonObject(*ops, "'ops'")) s.ops[op] = jsonCount(*ops, op);
  s.byGe = jsonBool(j, "by_ge");
  s.transdata = jsonCount(j, "transdata");
  s.streams = jsonCount(j, "streams");
  s.events = jsonCount(j, "events");
  s.built = j.find("arena_bytes") != nullptr;
  s.arenaBytes = jsonCount(j, "arena_bytes");
  s.lowerBoundBytes = jsonCount(j, "lower_bound_bytes");
  s.noReuseBytes = jsonCount(j, "no_reuse_bytes");
  s.weightBytes = jsonCount(j, "weight_bytes");
  s.ioBytes = jsonCount(j, "io_bytes");  // absent in summaries written before it was recorded: 0
  s.unsizedTensors = jsonCount(j, "unsized_tensors");
  const Json* tasks = j.find("tasks");
  s.tasks = tasks && tasks->isNull() && s.built ? -1 : jsonCount(j, "tasks");
  return s;
}

namespace {

// "; arena 12.1 MiB (lower bound 11.9 MiB, 38% of 31.5 MiB without reuse); tasks 164"
std::string builtText(const CompileSummary& s) {
  if (!s.built) return "";
  std::string t = "; arena " + formatBytes(double(s.arenaBytes)) + " (lower bound " +
                  formatBytes(double(s.lowerBoundBytes));
  if (s.noReuseBytes > 0)
    t += ", " + std::to_string(int64_t(100.0 * double(s.arenaBytes) / double(s.noReuseBytes) + 0.5)) + "% of " +
         formatBytes(double(s.noReuseBytes)) + " without reuse";
  t += ")";
  if (s.unsizedTensors > 0)
    t += "; " + std::to_string(s.unsizedTensors) + " tensors of unknown size not planned (symbolic or data-dependent shapes)";
  return t + "; tasks " + (s.tasks >= 0 ? std::to_string(s.tasks) : std::string("not recorded"));
}

}  // namespace

std::string compileSummaryLine(const CompileSummary& s) {
  std::string fused;
  for (const auto& [rule, n] : s.fused) fused += (fused.empty() ? "" : ", ") + rule + " " + std::to_string(n);
  return "fused: " + (fused.empty() ? std::string("none") : fused) + "; transdata " + std::to_string(s.transdata) +
         "; streams " + std::to_string(s.streams) + "; events " + std::to_string(s.events) + builtText(s);
}

}  // namespace kiln
