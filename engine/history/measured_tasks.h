#pragma once
// A run measured on an NPU as the history keeps it (schema version 8): where the profile came from, its device tasks
// with the graph node each was matched to, and the static memory GE reported per op. Plain rows; the import
// (measured_import.h) makes them from an msprof profile. Rows read back are untrusted like every history row.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "history/history_db.h"

namespace kiln {

struct MeasuredProfileRow {
  std::string source, tasksFile;
  std::string importedAt;  // ISO 8601 UTC
  int64_t skippedRows = 0;
  std::optional<int64_t> staticTotalBytes;
};

struct MeasuredTaskRow {
  int64_t task = 0;  // position in start order
  std::string name, opType, taskType;
  int64_t stream = 0;
  double startUs = 0, durationUs = 0;  // from the profile's first task
  std::optional<double> waitUs;
  std::optional<int64_t> blockDim;
  std::string inputShapes, inputTypes, outputShapes, outputTypes;  // as the profiler wrote them: "32,1024;1024"
  std::optional<int64_t> nodeId;  // the node of the run's last graph it ran, when one matched
  std::string matchedBy;          // "name", "original name", "type and shape", "" (unmatched)
};

struct StaticMemoryRow {
  int64_t seq = 0;
  std::string opName, graph;
  int64_t bytes = 0;
  int64_t nodeStart = 0, nodeEnd = -1;  // -1: to the end of the graph
};

struct MeasuredRun {
  MeasuredProfileRow profile;
  std::vector<MeasuredTaskRow> tasks;
  std::vector<StaticMemoryRow> staticMemory;
};

// Replaces what the run held (one measured profile per run), in one transaction. Throws HistoryError.
void writeMeasuredRun(HistoryDb& db, int64_t runId, const MeasuredRun& m);
// Empty (no profile, no tasks) when the run has none or the file predates schema 8.
MeasuredRun readMeasuredRun(const HistoryDb& db, int64_t runId);
bool hasMeasuredRun(const HistoryDb& db, int64_t runId);

}  // namespace kiln
