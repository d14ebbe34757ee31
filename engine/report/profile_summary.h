#pragma once
// What `kiln inspect PROFILE` says about a measured run (io/msprof): how many tasks, over how long, on which
// streams, per op type (count, total, min/avg/max), the longest tasks, and how much of the span the device was idle
// between tasks (a host that launches tasks one by one shows as gaps, not device time). Text for people, JSON for
// scripts: {"source", "tasks", "span_us", "device_busy_us", "idle_us", "streams": [...],
// "op_types": [{op_type, task_type, tasks, total_us, min_us, avg_us, max_us}], "longest": [...], "static_memory"...}.
#include <string>

#include "util/json.h"

namespace kiln::msprof {
struct MeasuredProfile;
}  // namespace kiln::msprof

namespace kiln {

Json profileSummaryJson(const msprof::MeasuredProfile& p);
std::string profileSummaryText(const msprof::MeasuredProfile& p);

}  // namespace kiln
