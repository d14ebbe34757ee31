#pragma once
// What the emulator adds to a run in the history: the numerical error of the graph after each pass against the
// original (kiln verify) and the simulated timeline of the compiled model (kiln run). Plain rows: the history knows
// nothing of the emulator, which converts its results into these.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "history/history_db.h"

namespace kiln {

struct PassAccuracyRow {
  int seq = 0;                 // the pass (0 = the imported graph)
  std::string status = "ok";   // ok, exceeds (over tolerance), not_emulatable, error
  std::optional<double> maxAbs, maxRel, cosine;
  std::string detail;          // which output, the first mismatch, the unsupported op, the error
};

struct TimelineRow {
  int task = 0;
  std::string type;            // KERNEL, EVENT_RECORD, ...
  std::optional<int64_t> nodeId;
  int stream = 0;
  std::optional<int> event;
  std::string unit;            // cube, vector, aicpu, dma, stream
  int cores = 0;
  double startUs = 0, endUs = 0;
  double flops = 0, bytes = 0;
  bool memoryBound = false;
  bool critical = false;
  bool costUnknown = false;  // stored as memory_bound = 2: the task's work was unknown (shapes not inferred)
};

// Each writes in one transaction (replacing rows of the same keys). Throw HistoryError on failure.
void writePassAccuracy(HistoryDb& db, int64_t runId, const PassAccuracyRow& row);
void writeTimeline(HistoryDb& db, int64_t runId, const std::vector<TimelineRow>& rows);

std::vector<PassAccuracyRow> readPassAccuracy(const HistoryDb& db, int64_t runId);
std::vector<TimelineRow> readTimeline(const HistoryDb& db, int64_t runId);

}  // namespace kiln
