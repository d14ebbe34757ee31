#pragma once
// A discrete-event run of a task list on a SoC profile. Each stream executes its tasks in order; an EVENT_WAIT
// holds its stream until the matching EVENT_RECORD has run on the other stream; an AI Core kernel starts once
// block_dim cores (of its pool) are free, an AI CPU kernel once an AI CPU core is, a copy once a DMA engine is. A
// host-driven model (not sunk) additionally cannot start a task before the host has launched it, one launch after
// another in list order; a sunk model pays no launches.
//
// Besides the timeline it reports the end-to-end latency, per-unit utilisation (busy core-time over capacity), the
// critical path (the chain of tasks, each of which started when its predecessor — on the stream, through an event,
// holding its cores or launched by the host — let it) and a roofline point per kernel.
#include <cstdint>
#include <string>
#include <vector>

#include "emulator/timing/task_cost.h"
#include "history/history_emulation.h"

namespace kiln {

struct TimelineEntry {
  int task = 0;  // index into the task list
  TaskType type = TaskType::Kernel;
  const Node* node = nullptr;
  int stream = 0;
  int event = -1;  // EVENT_RECORD / EVENT_WAIT
  SimUnit unit = SimUnit::Stream;
  int cores = 0;
  double startUs = 0, endUs = 0;
  double dispatchUs = 0;  // the stream's dispatch before startUs (the task's fixed cost, off the cores)
  double flops = 0, bytes = 0;
  bool memoryBound = false;
  bool critical = false;  // on the critical path
  bool costUnknown = false;  // TaskCost::costUnknown: only its fixed cost is in startUs..endUs
};

struct UnitUtilisation {
  SimUnit unit;
  int capacity = 0;     // cores or engines
  double busyUs = 0;    // summed over its cores
  double utilisation = 0;  // busy / (capacity x latency)
};

struct Timeline {
  std::vector<TimelineEntry> entries;  // one per task, in list order
  double latencyUs = 0;
  std::vector<UnitUtilisation> units;
  std::vector<int> criticalPath;  // task indices, first to last
  int64_t hostLaunches = 0;
  double hostLaunchUs = 0;        // total host launch time (0 when sunk)
  int unknownCostTasks = 0;       // tasks whose work is unknown (shapes not inferred): latency is a lower bound
};

// Throws std::runtime_error when a stream waits for an event no stream records (the list would hang).
Timeline simulateTimeline(const std::vector<Task>& tasks, const SocProfile& profile, bool sunk);

// The timeline as the history's `timeline` rows (kiln run --history stores them; the views read them back).
std::vector<TimelineRow> timelineRows(const Timeline& timeline);

}  // namespace kiln
