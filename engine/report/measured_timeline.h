#pragma once
// A run measured on an NPU beside Kiln's simulation of it, for the Timeline tab and the reports: the measured tasks
// (history/measured_tasks.h) join the chart on the same time scale (both start at 0) in lanes of their own; per
// matched node, the measured time per task beside the simulated time of its kernels, worst mismatch first.
//
// Host gaps: a profile whose device idles most of its span (torch_npu launching ops one at a time, an application
// feeding a model with host work between steps) is bound by the host, not by the device; the chart keeps the gaps as
// empty lanes, and hostGapNote says so rather than counting them as device time.
#include <cstdint>
#include <string>
#include <vector>

#include "history/measured_tasks.h"
#include "report/timeline_chart.h"

namespace kiln {

// The static memory GE reported (msprof's static_op_mem rows) live at each node index 0..steps-1: a row holds its
// bytes from node_start until node_end (-1: the graph's end). Rows beyond `steps` are clipped to it.
std::vector<int64_t> measuredStaticLive(const std::vector<StaticMemoryRow>& rows, int64_t steps);

// Adds the measured tasks to `chart` (a simulation, or an empty chart for a run measured only).
void addMeasuredTasks(TimelineChart& chart, const MeasuredRun& measured);

struct MeasuredOpTimes {
  int64_t nodeId = 0;
  std::string name, opType;
  int64_t measuredTasks = 0;
  double measuredUs = 0;         // mean per measured task
  bool simulated = false;        // the chart simulates kernels of this node
  double simulatedUs = 0;        // the node's simulated kernels summed, dispatch included (one execution)
  double ratio = 0;              // simulated / measured (0 when not simulated)
};

// Every node with measured tasks; those with a simulation first, by |log(simulated / measured)| worst first, then
// the measured-only ones by measured time.
std::vector<MeasuredOpTimes> measuredBesideSimulated(const TimelineChart& chart);

// "" when the measured device is busy for most of its span; else a sentence: busy, span, idle, and that the gaps are
// the host's.
std::string hostGapNote(const TimelineChart& chart);

}  // namespace kiln
