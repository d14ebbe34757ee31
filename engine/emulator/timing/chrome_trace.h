#pragma once
// A simulated timeline as Chrome trace-event JSON (opens in Perfetto and chrome://tracing): one track per stream and
// one per unit, a complete event per task with its node, op, bytes and FLOPs in args, and flow arrows from each
// EVENT_RECORD to the EVENT_WAIT it releases.
#include <string>

#include "emulator/timing/timeline_sim.h"

namespace kiln {

std::string chromeTraceJson(const Timeline& timeline, const std::string& title);
// Throws std::runtime_error when the file cannot be written.
void writeChromeTrace(const Timeline& timeline, const std::string& title, const std::string& path);

}  // namespace kiln
