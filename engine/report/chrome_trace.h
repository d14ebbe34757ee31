#pragma once
// A timeline as Chrome trace-event JSON (opens in Perfetto and chrome://tracing): one track per stream and one per
// unit, a complete event per task with its node, op, shapes, bytes and FLOPs in args, and flow arrows from each
// EVENT_RECORD to the EVENT_WAIT it releases. Written from the TimelineChart the Gantt chart draws, so `kiln run
// --trace`, batch reports and the workbench's export give the same file for the same run.
#include <string>

#include "report/timeline_chart.h"

namespace kiln {

std::string chromeTraceJson(const TimelineChart& chart, const std::string& title);
// Throws std::runtime_error when the file cannot be written.
void writeChromeTrace(const TimelineChart& chart, const std::string& title, const std::string& path);

}  // namespace kiln
