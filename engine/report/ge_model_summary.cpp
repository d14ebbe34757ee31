#include "report/ge_model_summary.h"

#include <set>
#include <sstream>

#include "io/om/ge_model_builder.h"
#include "ir/model.h"
#include "ir/model_metadata.h"
#include "kernels/ge/ge_lowering.h"
#include "memory/lifetimes.h"
#include "report/memory_chart.h"
#include "util/units.h"

namespace kiln {
namespace {

std::optional<int64_t> recorded(const Model& m, const char* key) {
  const uint64_t v = metadataU64(m, key);
  return v > 0 ? std::optional<int64_t>(int64_t(v)) : std::nullopt;
}

std::string bytesOr(const std::optional<int64_t>& v) { return v ? formatBytes(double(*v)) : std::string("not recorded"); }

}  // namespace

GeModelSummary summarizeGeModel(const Model& m) {
  GeModelSummary s;
  for (const Node* n : m.graph->nodes()) s.geGraph = s.geGraph || n->domain() == om::kGeDomain;
  if (!s.geGraph) return s;
  s.memorySize = recorded(m, "om.memory_size");
  s.weightSize = recorded(m, "om.weight_size");
  s.streamNum = recorded(m, "om.stream_num");
  s.eventNum = recorded(m, "om.event_num");
  s.planned = m.precompiled;
  if (s.planned) {
    const MemoryChart ge = buildMemoryChart(*m.graph);
    s.geArenaBytes = ge.arenaBytes;
    s.lowerBound = ge.lowerBound;
    s.placedTensors = int(ge.blocks.size()) - ge.unplaced;
    s.unplacedTensors = ge.unplaced;
    const MemoryChart kiln = buildMemoryChart(*m.graph, "best_of");
    s.kilnArenaBytes = kiln.arenaBytes;
    s.kilnPlanDetail = kiln.planDetail;
    s.weightBytes = memory::computeLifetimes(*m.graph).weightBytes;
    std::set<std::string> streams;
    for (const Node* n : m.graph->nodes())
      if (const std::string st = n->annotation("stream"); !st.empty() && st != "-1") streams.insert(st);
    s.streamsUsed = int64_t(streams.size());
  }
  const geops::LoweredModel lowered = geops::lowerGeModel(m);
  s.runs = lowered.model != nullptr;
  s.notRunOps = int(lowered.issues.size());
  for (const geops::LoweringIssue& i : lowered.issues) s.notRun.emplace(i.type, i.why);
  s.inferredOps = int(lowered.inferred.size());
  return s;
}

Json geModelSummaryJson(const GeModelSummary& s) {
  Json j = Json::object();
  auto opt = [](const std::optional<int64_t>& v) { return v ? Json(*v) : Json(); };
  Json ge = Json::object();
  ge.set("memory_size", opt(s.memorySize));
  ge.set("weight_size", opt(s.weightSize));
  ge.set("stream_num", opt(s.streamNum));
  ge.set("event_num", opt(s.eventNum));
  if (s.planned) {
    ge.set("plan_arena_bytes", s.geArenaBytes);
    ge.set("placed_tensors", int64_t(s.placedTensors));
    ge.set("unplaced_tensors", int64_t(s.unplacedTensors));
    ge.set("streams_used", s.streamsUsed);
  }
  j.set("ge", std::move(ge));
  if (s.planned) {
    Json kiln = Json::object();
    kiln.set("arena_bytes", s.kilnArenaBytes);
    kiln.set("lower_bound_bytes", s.lowerBound);
    kiln.set("weight_bytes", s.weightBytes);
    kiln.set("planner", "best_of");
    kiln.set("plan_detail", s.kilnPlanDetail);
    j.set("kiln_plan", std::move(kiln));
  }
  Json run = Json::object();
  run.set("runs", s.runs);
  run.set("ops_not_run", int64_t(s.notRunOps));
  Json why = Json::object();
  for (const auto& [type, reason] : s.notRun) why.set(type, reason);
  run.set("not_run", std::move(why));
  run.set("inferred_ops", int64_t(s.inferredOps));
  j.set("emulator", std::move(run));
  return j;
}

std::string geModelSummaryText(const GeModelSummary& s) {
  if (!s.geGraph) return {};
  std::ostringstream os;
  os << "\nGE's plan\n";
  if (!s.planned) {
    os << "  (none: the graph carries no offsets; a Build-stage dump or an .om does)\n";
  } else {
    os << "  memory_size    " << padRight(bytesOr(s.memorySize), 14) << "GE's total (feature maps and, zero-copy, the "
                                                                         "inputs and outputs)\n"
       << "  plan extent    " << padRight(formatBytes(double(s.geArenaBytes)), 14) << "where GE's offsets put "
       << s.placedTensors << " feature maps" << (s.unplacedTensors ? " (" + std::to_string(s.unplacedTensors) + " without one)" : "")
       << "\n"
       << "  Kiln's plan    " << padRight(formatBytes(double(s.kilnArenaBytes)), 14)
       << "best_of over the same tensors in GE's order (lower bound " << formatBytes(double(s.lowerBound)) << ")\n"
       << "  weight_size    " << padRight(bytesOr(s.weightSize), 14) << "GE's; the constants in the file: "
       << formatBytes(double(s.weightBytes)) << "\n"
       << "  stream_num     " << padRight(s.streamNum ? std::to_string(*s.streamNum) : "not recorded", 14) << "GE's; "
       << s.streamsUsed << " used by the ops" << (s.eventNum ? ", event_num " + std::to_string(*s.eventNum) : "") << "\n";
  }
  os << "\nEmulator\n";
  if (s.runs) {
    os << "  every op runs (kiln run FILE; kiln run FILE --reference SOURCE.onnx compares with the source)"
       << (s.inferredOps ? "; " + std::to_string(s.inferredOps) + " fused ops' geometry read off shapes" : "") << "\n";
  } else {
    os << "  does not run: " << s.notRunOps << (s.notRunOps == 1 ? " op" : " ops") << " cannot\n";
    for (const auto& [type, why] : s.notRun) os << "  - " << type << ": " << why << "\n";
  }
  return os.str();
}

}  // namespace kiln
