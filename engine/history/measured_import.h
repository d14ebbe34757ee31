#pragma once
// An msprof profile into the history (`kiln history import DB PROFILE [--run N]`, File > Import Profile...):
//   - beside run N: each measured task is matched to a node of the run's last graph — by name (the profiler names a
//     graph op's task after the op), by an original name a fused node records (fusion.original_names), then by GE's
//     op type and output shape (the k-th task of a type and shape to the k-th such node, in graph order, repeating
//     for each step the profile spans) — and the counts of each kind of match are reported;
//   - on its own: a run whose graph holds one node per measured op (type, name, recorded output shape; no edges,
//     since a profile records no data flow), every task matched to its op by name.
// One measured profile per run; importing again replaces it.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "history/history_db.h"
#include "io/msprof/msprof_profile.h"

namespace kiln {

// The "source" option of a run made of a profile alone.
inline constexpr const char* kMeasuredRunSource = "msprof profile";

struct MeasuredImportResult {
  int64_t runId = 0;
  bool newRun = false;
  int64_t tasks = 0;
  int64_t byName = 0, byOriginalName = 0, byTypeAndShape = 0, unmatched = 0;
  int64_t staticMemoryRows = 0;
  std::vector<std::string> notes;
};

// Throws HistoryError for an unknown run, LoadError when the profile has no tasks.
MeasuredImportResult importMeasuredProfile(HistoryDb& db, const msprof::MeasuredProfile& profile,
                                           std::optional<int64_t> runId);

}  // namespace kiln
