#include "report/run_metrics.h"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "emulator/emulation.h"
#include "emulator/precision_gate.h"
#include "emulator/timing/timeline_sim.h"
#include "ir/model.h"
#include "passes/pass_manager.h"
#include "util/json_fields.h"

namespace kiln {

int64_t RunMetrics::fusions() const {
  int64_t n = 0;
  for (const auto& [rule, count] : compile.fused) n += count;
  return n;
}

RunMetrics collectRunMetrics(const Model& compiled, const RunSummary& run, const Timeline* timeline,
                             const EmulationReport* emulation, const PrecisionGate* gate) {
  RunMetrics m;
  if (run.status != RunStatus::Ok) {
    m.status = "failed";
    m.reason = run.error.empty() ? std::string("the compile stopped") : "pass " + run.error;
  }
  m.nodesBefore = run.nodesBefore;
  m.nodesAfter = run.nodesAfter;
  m.compile = summarizeCompile(compiled, run);
  m.compileMs = run.ms;
  m.shapeBinding = compiled.binding.shortText();
  if (timeline) {
    m.simulated = true;
    m.latencyUs = timeline->latencyUs;
    for (const UnitUtilisation& u : timeline->units) m.utilisation[std::string(simUnitName(u.unit))] = u.utilisation;
    m.hostLaunches = timeline->hostLaunches;
  }
  if (emulation && emulation->compiledError.empty()) {
    m.functional = true;
    m.maxAbsError = emulation->maxAbsError();  // +inf when an output could not be compared (type or shape differ)
    m.maxRelError = emulation->maxRelError();
    m.minCosine = emulation->minCosine();
    if (gate) {
      const std::vector<OutputVerdict> verdicts = judgeOutputs(*emulation, *gate);
      m.gate = gate->describe();
      m.numericsReason = firstFailure(verdicts);
      m.numericsPassed = m.numericsReason.empty();
      if (m.numericsPassed)
        m.numericsReason = "every output (" + std::to_string(verdicts.size()) + ") passed the " + m.gate;
    }
  }
  return m;
}

namespace {

// JSON has no infinity: an incomparable output's error is written as null and read back as +inf.
Json errorJson(double v) { return std::isfinite(v) ? Json(v) : Json(); }
double errorFromJson(const Json& j, const std::string& key) {
  const Json* v = j.find(key);
  if (v && v->isNull()) return std::numeric_limits<double>::infinity();
  return jsonNumber(j, key, 0, 0);
}

}  // namespace

Json runMetricsToJson(const RunMetrics& m) {
  Json j = Json::object();
  j.set("model", m.model);
  j.set("option_set", m.optionSet);
  j.set("status", m.status);
  if (!m.reason.empty()) j.set("reason", m.reason);
  j.set("nodes_before", m.nodesBefore);
  j.set("nodes_after", m.nodesAfter);
  j.set("fusions", m.fusions());
  Json compile = compileSummaryToJson(m.compile);  // fused, transdata, streams, events, arena... (flattened)
  for (auto& [k, v] : compile.asObject()) j.set(k, std::move(v));
  if (m.simulated) {
    j.set("latency_us", m.latencyUs);
    Json util = Json::object();
    for (const auto& [unit, u] : m.utilisation) util.set(unit, u);
    j.set("utilisation", std::move(util));
    j.set("host_launches", m.hostLaunches);
  }
  if (!m.shapeBinding.empty()) j.set("shape_binding", m.shapeBinding);
  j.set("functional", m.functional);
  if (m.functional) {
    j.set("max_abs_error", errorJson(m.maxAbsError));
    j.set("max_rel_error", errorJson(m.maxRelError));
    j.set("min_cosine", m.minCosine);
    if (!m.gate.empty()) {
      j.set("numerics", m.numericsPassed ? "passed" : "failed");
      j.set("gate", m.gate);
      j.set("numerics_reason", m.numericsReason);
    }
  } else {
    j.set("numerics", "missing");  // not measured: never read as a pass (the reason says why)
  }
  j.set("compile_ms", m.compileMs);
  return j;
}

RunMetrics runMetricsFromJson(const Json& j) {
  jsonObject(j, "a case");
  RunMetrics m;
  m.model = jsonString(j, "model");
  if (m.model.empty()) throw std::invalid_argument("'model': missing");
  m.optionSet = jsonString(j, "option_set");
  m.status = jsonString(j, "status", "ok");
  if (m.status != "ok" && m.status != "failed")
    throw std::invalid_argument("'status': expected \"ok\" or \"failed\", got \"" + m.status + "\"");
  m.reason = jsonString(j, "reason");
  m.nodesBefore = jsonCount(j, "nodes_before");
  m.nodesAfter = jsonCount(j, "nodes_after");
  m.compile = compileSummaryFromJson(j);
  m.simulated = j.find("latency_us") != nullptr;
  m.latencyUs = jsonNumber(j, "latency_us", 0, 0);
  if (const Json* util = j.find("utilisation"); util && !util->isNull())
    for (const auto& [unit, v] : jsonObject(*util, "'utilisation'")) m.utilisation[unit] = jsonNumber(*util, unit, 0, 0, 1e6);
  m.hostLaunches = jsonCount(j, "host_launches");
  m.functional = jsonBool(j, "functional");
  if (m.functional) {
    m.maxAbsError = errorFromJson(j, "max_abs_error");
    m.maxRelError = errorFromJson(j, "max_rel_error");
    m.minCosine = jsonNumber(j, "min_cosine", 1, -1, 1);
    const std::string numerics = jsonString(j, "numerics");
    if (!numerics.empty() && numerics != "passed" && numerics != "failed")
      throw std::invalid_argument("'numerics': expected \"passed\" or \"failed\", got \"" + numerics + "\"");
    m.numericsPassed = numerics == "passed";
    m.gate = jsonString(j, "gate");
    m.numericsReason = jsonString(j, "numerics_reason");
  }
  m.shapeBinding = jsonString(j, "shape_binding");
  m.compileMs = jsonNumber(j, "compile_ms", 0, 0);
  return m;
}

}  // namespace kiln
