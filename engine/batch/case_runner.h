#pragma once
// One batch case: a model compiled under one option set, its task list simulated on the option set's SoC profile,
// the compiled graph emulated against the original where the emulator supports every op, the gates evaluated, and
// its Chrome trace and HTML page written. Never throws: a bad file, a failing pass, a timing or numeric failure
// become the case's status and reason, so the batch goes on.
#include <mutex>

#include <string>
#include <vector>

#include "batch/batch_case.h"
#include "batch/batch_summary.h"

#include "variants/shape_variants.h"

namespace kiln {

class HistoryDb;
class ReferenceCache;

struct CaseContext {
  std::string outDir;               // cases/<id>.html and cases/<id>.trace.json go under it; empty: no files
  HistoryDb* history = nullptr;     // this worker's own connection; null: nothing recorded
  std::mutex* historyLock = nullptr;  // shared by every worker writing to the same file
  bool functional = true;           // run the functional emulation (off: timing only)
  ReferenceCache* references = nullptr;  // shares one reference run per model; null: each case runs its own
  const BatchSummary* baseline = nullptr;
  const std::vector<GateExpr>* gates = nullptr;
  const SweepSpec* sweep = nullptr;  // --sweep
  std::string overlay;               // --overlay: the case page's graph coloured by this metric (layout/node_overlay)
};

CaseRecord runCase(const BatchCase& c, const CaseContext& ctx);

}  // namespace kiln
