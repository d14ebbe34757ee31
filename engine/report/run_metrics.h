#pragma once
// The numbers of one model compiled and emulated under one option set: the record `kiln batch` writes per case
// (summary.json, the tables, the gates) and the workbench's compare view shows side by side. One definition, so a
// number means the same thing in the CI report and on screen.
#include <cstdint>
#include <map>
#include <string>

#include "report/compile_summary.h"
#include "util/json.h"

namespace kiln {

struct Model;
struct RunSummary;
struct Timeline;
struct EmulationReport;
struct PrecisionGate;

struct RunMetrics {
  std::string model;      // the model path as given
  std::string optionSet;  // the option set's name (its file stem, "default", "o1")
  std::string status = "ok";  // "ok" or "failed"
  std::string reason;         // why it failed (empty when ok); also set for an ok run whose functional check was skipped
  int64_t nodesBefore = 0, nodesAfter = 0;
  CompileSummary compile;      // fusions by rule, TransData, streams, events, arena, lower bound, no-reuse, weights, tasks
  bool simulated = false;      // the timing simulation ran: the three below are set
  double latencyUs = 0;
  std::map<std::string, double> utilisation;  // unit ("cube", "vector", ...) -> busy core-time / (capacity × latency)
  int64_t hostLaunches = 0;
  std::string shapeBinding;   // "batch_size=1, seq_len=128": the extents the model was compiled at ("" if static)
  bool functional = false;     // the functional emulation ran (compiled vs reference): the errors below are set
  double maxAbsError = 0, maxRelError = 0, minCosine = 1;
  // The precision gate's verdict (emulator/precision_gate.h) when the functional emulation ran: passed or not,
  // which gate, and the first failing output's reason (or what every output passed).
  bool numericsPassed = false;
  std::string gate, numericsReason;
  double compileMs = 0;

  int64_t fusions() const;     // all rules together
  bool ok() const { return status == "ok"; }
};

// From the pieces a compile and an emulation leave; `timeline` and `emulation` may be null (not run). Node counts are
// the RunSummary's (the imported graph's and the compiled graph's, subgraphs included: what `kiln compile` prints).
// The status is "failed" with the pass's error when the compile failed; model and option set name are the caller's.
// With `gate`, the functional run's outputs are judged by it (numericsPassed, numericsReason).
RunMetrics collectRunMetrics(const Model& compiled, const RunSummary& run, const Timeline* timeline,
                             const EmulationReport* emulation, const PrecisionGate* gate = nullptr);

Json runMetricsToJson(const RunMetrics& m);
// From untrusted JSON (a baseline summary.json, a shard's report): every field is type- and range-checked; throws
// std::invalid_argument naming the field. Absent optional fields keep their defaults.
RunMetrics runMetricsFromJson(const Json& j);

}  // namespace kiln
