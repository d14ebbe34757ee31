#pragma once
// Runs a batch: the cases on `jobs` worker threads (each case is independent; results keep the case list's order),
// then the report files. With a history, every worker records through its own connection and the workers take
// turns per pass (batch/locked_observer), so one file collects every case's compile and timeline.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "batch/batch_case.h"
#include "batch/batch_summary.h"
#include "batch/gate_expr.h"

#include "variants/shape_variants.h"

namespace kiln {

struct BatchSettings {
  std::vector<BatchCase> cases;
  std::vector<std::string> optionSets;  // names, for the summary
  std::string outDir;                   // created when missing
  std::string historyPath;              // empty: no history
  std::string shard;                    // "I/N" for the summary, empty for the whole list
  int jobs = 1;
  bool functional = true;
  const BatchSummary* baseline = nullptr;
  std::vector<GateExpr> gates;
  std::optional<SweepSpec> sweep;  // --sweep: every case also compiled at each extent (timing only)
  std::string overlay;             // --overlay: case pages colour the graph by this metric (layout/node_overlay)
  // Called as each case finishes (from its worker, one call at a time): `done` of `total`.
  std::function<void(const CaseRecord&, size_t done, size_t total)> progress;
};

// Throws LoadError when the history cannot be opened (a foreign or newer file, never modified) and
// std::runtime_error when --out cannot be created or written; a case's own failures are in its record.
BatchSummary runBatch(const BatchSettings& settings);

}  // namespace kiln
