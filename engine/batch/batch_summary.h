#pragma once
// What a batch leaves in summary.json, and what --baseline and --merge-reports read back: per case its id, its
// RunMetrics, the gates evaluated on it and its timings; for the batch the option sets, the shard and the totals.
// Files read back are untrusted: readBatchSummary checks every field and throws LoadError naming the file.
#include <optional>
#include <string>
#include <vector>

#include "batch/gate_expr.h"
#include "report/run_metrics.h"
#include "report/sweep_chart.h"
#include "util/json.h"

namespace kiln {

struct GateRecord {
  std::string expr;
  GateOutcome outcome;
};

struct CaseRecord {
  std::string id;
  RunMetrics metrics;
  std::vector<GateRecord> gates;
  double wallMs = 0;    // the whole case: load, compile, simulation, emulation, its page and trace
  double reportMs = 0;  // of which writing its page and trace
  bool hasPage = false, hasTrace = false;  // cases/<id>.html, cases/<id>.trace.json
  // `kiln batch --sweep`: the model compiled at each extent of the swept symbol (absent when not asked for or the
  // model has no such symbol; then the case's reason says so).
  std::optional<SweepChart> sweep;
  // A case passes when it ran (status ok) and no gate failed.
  bool passed() const;
  // Why it did not pass: the reason, then each failed gate ("" when it passed).
  std::string failure() const;
};

struct BatchSummary {
  std::vector<CaseRecord> cases;
  std::vector<std::string> optionSets;
  std::string shard;   // "2/4", empty for the whole list
  int jobs = 1;
  double totalMs = 0;  // wall time of the batch
  double reportMs = 0; // writing the reports: every case's page and trace plus the summary files
  int failed() const;  // cases that did not pass
  // Gates that could not be evaluated (no baseline case, a number not measured): a CI job should notice them, since a
  // gate that never runs never fails.
  int skippedGates() const;
};

Json caseRecordToJson(const CaseRecord& c);
Json batchSummaryToJson(const BatchSummary& s);
// Throws LoadError(path, problem) for an unreadable file, bad JSON or a bad field ("cases[3]: 'latency_us': ...").
BatchSummary readBatchSummary(const std::string& path);

// The baseline case for a model × option set: the same pair, else — when the baseline ran one option set only —
// the same model under it (comparing an option set against another's baseline). A model is matched by its path as
// given, else by its file name when exactly one baseline model has that name. Null when none.
const CaseRecord* findBaselineCase(const BatchSummary& baseline, const std::string& model, const std::string& optionSet);

}  // namespace kiln
