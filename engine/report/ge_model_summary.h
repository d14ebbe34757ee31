#pragma once
// What `kiln inspect` adds for a graph GE made (an .om, a GE graph dump, an om JSON): GE's own totals
// (memory_size, weight_size, stream_num, event_num, where GE recorded them) and what its plan's offsets give, beside
// what Kiln's planner makes of the same tensors in the same order (memory/: the best_of planner over the lifetimes
// GE's execution order gives); and whether the emulator can run the graph (kernels/ge/ge_lowering.h), naming the
// ops it cannot run and why.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "util/json.h"

namespace kiln {

struct Model;

struct GeModelSummary {
  bool geGraph = false;  // the model holds GE ops at all
  bool planned = false;  // it carries GE's plan (output offsets)
  // GE's totals as the file records them; nullopt where it records none (a dump before Build says 0).
  std::optional<int64_t> memorySize, weightSize, streamNum, eventNum;
  int64_t geArenaBytes = 0, lowerBound = 0;  // the extent of GE's offsets over the feature maps; the live peak
  int placedTensors = 0, unplacedTensors = 0;
  int64_t streamsUsed = 0;                   // distinct streams the ops are on
  int64_t kilnArenaBytes = 0;                // Kiln's best_of over the same tensors
  std::string kilnPlanDetail;
  int64_t weightBytes = 0;                   // the constants the file carries (GE's rounding)
  // The emulator: whether every op can run, else the ops that cannot (type -> first reason) and how many.
  bool runs = false;
  std::map<std::string, std::string> notRun;  // op type -> why (the first op of that type)
  int notRunOps = 0;
  int inferredOps = 0;  // ops whose geometry is read off shapes or kernel names
};

GeModelSummary summarizeGeModel(const Model& m);
Json geModelSummaryJson(const GeModelSummary& s);
std::string geModelSummaryText(const GeModelSummary& s);  // "" when the model is not GE's

}  // namespace kiln
