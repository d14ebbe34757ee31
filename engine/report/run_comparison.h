#pragma once
// Two runs' numbers side by side, as the workbench's compare view lists them: nodes, fusions (all, then each rule
// either run used), TransData, streams, events, tasks, arena, lower bound, memory without reuse, simulated latency,
// utilisation per unit, host launches, max error and compile time, each with A, B and B − A. A number one run does
// not have (no timeline, never verified) is absent on that side, and the row has no delta.
#include <optional>
#include <string>
#include <vector>

#include "report/run_metrics.h"

namespace kiln {

struct MetricComparison {
  std::string metric;      // "fusions: LayerNormFusion", "latency", "utilisation: cube"
  std::string unit;        // "", "bytes", "us", "ms", "ratio"
  std::optional<double> a, b;
  bool lowerIsBetter = true;  // false for fusions and utilisation
  std::optional<double> delta() const;  // b − a when both are present
  // -1 B is better, +1 B is worse, 0 equal or not comparable.
  int verdict() const;
};

std::vector<MetricComparison> compareRunMetrics(const RunMetrics& a, const RunMetrics& b);

// `kiln history compare`: a table of the rows (metric, A, B, B - A, and which is better), and the same as JSON
// ({"a", "b", "rows": [{"metric", "unit", "a", "b", "delta", "verdict": "better"|"worse"|""}]}).
std::string comparisonText(const std::vector<MetricComparison>& rows, const std::string& a, const std::string& b);
Json comparisonJson(const std::vector<MetricComparison>& rows, const std::string& a, const std::string& b);

}  // namespace kiln
