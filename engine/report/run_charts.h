#pragma once
// The memory chart and the timeline of one recorded run, for the workbench (which calls this on a worker thread).
// Both need the compiled graph in memory — the history keeps node rows but not the execution order lifetimes follow —
// so the caller hands over the model it just compiled, or, for a run read back from a history, the run's model is
// compiled again with the run's recorded options (the same passes on the same file give the same graph and the same
// node ids; the node count is checked against the run's). The timeline is the one `kiln run --history` recorded when
// the history has it, else a fresh simulation of the graph's task list on the run's SoC profile.
// A run that never reached MemoryAssignment / TaskGeneration gets a sentence instead of a chart.
#include <cstdint>
#include <memory>
#include <string>

#include "report/memory_chart.h"
#include "report/run_metrics.h"
#include "report/timeline_chart.h"

namespace kiln {

struct Model;

struct RunCharts {
  std::shared_ptr<const MemoryChart> memory;      // null: see memoryMessage
  std::shared_ptr<const TimelineChart> timeline;  // null: see timelineMessage
  std::string memoryMessage, timelineMessage;
  bool recompiled = false;  // the graph was compiled again from the model file
  std::shared_ptr<const Model> compiled;  // the graph the charts were drawn from (the memory view replans it)
  // The run's numbers as `kiln batch` reports them (compile summary from the recorded passes, latency and
  // utilisation from the same simulation `kiln run` does, the error of the last verified pass when the run was
  // verified); `hasMetrics` false when the run failed or the history could not be read.
  RunMetrics metrics;
  bool hasMetrics = false;
};

// Never throws: every failure becomes the views' message.
RunCharts loadRunCharts(const std::string& historyPath, int64_t runId, std::shared_ptr<const Model> compiled);

}  // namespace kiln
