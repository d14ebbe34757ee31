#pragma once
// The names gate expressions use for a case's numbers (`--fail-on "latency > 1.05*baseline"`), read from a
// RunMetrics. A number the run did not measure (no functional emulation, a compile that never reached Stage 3) is
// absent, so a gate on it is skipped with a reason rather than compared with a made-up zero.
#include <optional>
#include <string>
#include <vector>

#include "report/run_metrics.h"

namespace kiln {

// latency, arena, lower_bound, no_reuse, weights, tasks, nodes, nodes_before, fusions, fused.<Rule>, transdata,
// streams, events, max_error, max_rel_error, host_launches, compile_ms, util.<unit>.
bool isCaseMetric(const std::string& name);
// nullopt when the run did not measure it (`why` says what is missing).
std::optional<double> caseMetric(const RunMetrics& m, const std::string& name, std::string* why = nullptr);
// The names, for messages.
const std::vector<std::string>& caseMetricNames();

// The metrics the reports tabulate, in column order, with their headings.
struct MetricColumn {
  std::string name;   // as gates name it
  std::string title;  // column heading
};
const std::vector<MetricColumn>& reportColumns();
// The value as people read it ("12.4 MiB", "18.2 µs", "1,234", "3.1e-05"); "—" when not measured.
std::string caseMetricText(const RunMetrics& m, const std::string& name);

}  // namespace kiln
