#pragma once
// The workbench's two charts drawn as static SVG for the batch report (report/memory_chart and
// report/timeline_chart give the data; the views draw the same data with Qt). Tooltips carry what the workbench's
// inspector would show. Very large charts keep the biggest blocks / longest tasks, and say so.
#include <string>

#include "report/memory_chart.h"
#include "report/sweep_chart.h"
#include "report/timeline_chart.h"

namespace kiln {

// Tensors as rectangles (lifetime across, arena offset up), coloured by reuse block; arena and lower bound as
// lines; the live-bytes curve.
std::string memoryChartSvg(const MemoryChart& chart, double width = 960);
// A lane per stream, a rectangle per task coloured by unit, the critical path outlined, utilisation per lane.
std::string timelineChartSvg(const TimelineChart& chart, double width = 960);
// Arena, lower bound and memory without reuse (left, bytes) and simulated latency (right, µs) against the swept
// extent (a log axis when the values span more than 8x); failed points are gaps, listed under the chart.
std::string sweepChartSvg(const SweepChart& chart, double width = 960);

}  // namespace kiln
