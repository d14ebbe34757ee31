#pragma once
// What the Gantt chart draws for a simulated run: every task of the compiled task list with its node (name, op,
// shapes), stream, unit, start and end, FLOPs, bytes, bound and whether it is on the critical path; the event
// arrows from each EVENT_RECORD to the EVENT_WAITs of the same event; and lanes — one per stream, or one per unit —
// with each task's row inside its lane and the lane's utilisation. Built either from a fresh simulation
// (emulator/timing/timeline_sim) or from the `timeline` rows a history holds (`kiln run --history`), which are
// untrusted: rows with non-finite or reversed times are dropped, not drawn.
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "history/history_emulation.h"
#include "layout/node_overlay.h"

namespace kiln {

class Graph;
struct Timeline;
struct SocProfile;

struct TimelineChartTask {
  int task = 0;            // position in the task list
  std::string type;        // KERNEL, KERNEL_EX, EVENT_RECORD, EVENT_WAIT, MEMCPY_ASYNC, END_GRAPH
  int64_t nodeId = 0;      // 0: no node (END_GRAPH and its join events)
  std::string nodeName, opType;
  std::string shapes;      // "fp16[1×64×56×56×16] → fp16[...]": inputs, then outputs
  int stream = 0;
  int event = -1;
  std::string unit;        // cube, vector, aicpu, dma, stream
  int cores = 0;
  double startUs = 0, endUs = 0;
  double dispatchUs = 0;   // simulated: the stream's dispatch before it (its fixed cost, off the cores)
  double flops = 0, bytes = 0;
  bool memoryBound = false;
  bool critical = false;
  bool costUnknown = false;  // simulated with its fixed cost only: its node's shapes were not inferred
  // A task measured on an NPU (an msprof profile beside the run, report/measured_timeline.h): `type` is the
  // profiler's task type (AI_CORE, AI_VECTOR_CORE, AI_CPU...), `unit` too; its node, when the import matched one.
  bool measured = false;
};

// An event's record and one of its waits (indexes into TimelineChart::tasks).
struct TimelineChartArrow {
  size_t record = 0, wait = 0;
  int event = -1;
};

struct TimelineChartLane {
  std::string label;          // "stream 0", "cube"
  int stream = -1;            // the stream of a stream lane
  std::vector<size_t> tasks;  // indexes into TimelineChart::tasks, by start time
  std::vector<int> row;       // per entry of `tasks`: its row inside the lane (overlapping tasks stack)
  int rows = 1;
  double busyUs = 0;          // stream lane: time running work; unit lane: busy core-time
  double utilisation = 0;     // stream: busy / latency; unit: busy core-time / (capacity × latency)
  bool hasUtilisation = false;  // false for the events lane (the stream itself is no resource with a capacity)
};

struct TimelineChart {
  std::vector<TimelineChartTask> tasks;  // by task number
  std::vector<TimelineChartArrow> arrows;
  double latencyUs = 0;
  std::map<std::string, int> capacity;  // cores or engines per unit (from the SoC profile)
  std::string source;                   // "simulated on Ascend910A" / "history (kiln run)"
  int droppedRows = 0;                  // history rows refused as malformed
  // Measured tasks drawn beside the simulated ones: how many, from where, the device time they cover and the span
  // from the first start to the last end (the rest of the span is the device idle: host gaps when tasks are
  // launched one by one).
  int measuredTasks = 0;
  std::string measuredSource;
  double measuredBusyUs = 0, measuredSpanUs = 0;
};

// From a simulation of the same graph's task list (entries point at its nodes).
TimelineChart timelineChartFromSimulation(const Timeline& timeline, const SocProfile& profile);
// The node's name, type and shapes on a task (nothing for a null node).
void describeTimelineNode(TimelineChartTask& t, const Node* n);
// Every node's kernels summed: simulated time and bytes moved, for the graph overlays; measured tasks apart.
std::unordered_map<int64_t, layout::NodeTiming> nodeTimingOf(const TimelineChart& chart);
// From history rows; node facts looked up in `g` (the compiled graph of the same run) by node id.
TimelineChart timelineChartFromRows(const std::vector<TimelineRow>& rows, const Graph& g, const SocProfile& profile);

// Lanes: one per stream (byUnit false), or one per unit that ran a task (cube, vector, aicpu, dma, then stream for
// events and END_GRAPH). Measured tasks get lanes of their own, first, labelled "measured · ..." (per stream, or per
// task type), and the simulated lanes are then labelled "simulated · ...".
std::vector<TimelineChartLane> timelineLanes(const TimelineChart& chart, bool byUnit);

}  // namespace kiln
