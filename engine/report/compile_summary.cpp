#include "report/compile_summary.h"

#include <set>
#include <vector>

#include "ir/graph.h"
#include "ir/model.h"
#include "passes/optimize/optimize_passes.h"
#include "passes/pass_manager.h"
#include "schedule/sync_events.h"

namespace kiln {

namespace {
// The fusion drivers (passes/optimize/graph_fusion.h): their counters are rule names, plus the bytes saved.
bool isFusionPass(const std::string& name) { return name == "GraphFusion" || name == "UBFusion"; }
}  // namespace

CompileSummary summarizeCompile(const Model& compiled, const RunSummary& run) {
  CompileSummary s;
  for (const PassRecord& p : run.passes)
    if (isFusionPass(p.name))
      for (const auto& [k, v] : p.counters)
        if (k != "hbm_bytes_saved" && v > 0) s.fused[k] += v;
  s.transdata = countTransData(compiled);
  const std::vector<Node*> order(compiled.graph->nodes().begin(), compiled.graph->nodes().end());
  std::set<int> streams;
  for (const auto& [n, stream] : streamsFromAnnotations(order)) streams.insert(stream);
  s.streams = static_cast<int64_t>(streams.size());
  s.events = static_cast<int64_t>(eventsFromAnnotations(order).size());
  return s;
}

Json compileSummaryToJson(const CompileSummary& s) {
  Json j = Json::object();
  Json fused = Json::object();
  for (const auto& [rule, n] : s.fused) fused.set(rule, n);
  j.set("fused", std::move(fused));
  j.set("transdata", s.transdata);
  j.set("streams", s.streams);
  j.set("events", s.events);
  return j;
}

std::string compileSummaryLine(const CompileSummary& s) {
  std::string fused;
  for (const auto& [rule, n] : s.fused) fused += (fused.empty() ? "" : ", ") + rule + " " + std::to_string(n);
  return "fused: " + (fused.empty() ? std::string("none") : fused) + "; transdata " + std::to_string(s.transdata) +
         "; streams " + std::to_string(s.streams) + "; events " + std::to_string(s.events);
}

}  // namespace kiln
