#include "report/run_comparison.h"

#include <cmath>
#include <set>

namespace kiln {

std::optional<double> MetricComparison::delta() const {
  if (!a || !b) return std::nullopt;
  return *b - *a;
}

int MetricComparison::verdict() const {
  const auto d = delta();
  if (!d || *d == 0 || !std::isfinite(*d)) return 0;
  return (*d < 0) == lowerIsBetter ? -1 : 1;
}

std::vector<MetricComparison> compareRunMetrics(const RunMetrics& a, const RunMetrics& b) {
  std::vector<MetricComparison> rows;
  auto add = [&rows](std::string metric, std::string unit, std::optional<double> x, std::optional<double> y,
                     bool lowerIsBetter = true) {
    rows.push_back({std::move(metric), std::move(unit), x, y, lowerIsBetter});
  };
  auto both = [&](std::string metric, std::string unit, double x, double y, bool lowerIsBetter = true) {
    add(std::move(metric), std::move(unit), x, y, lowerIsBetter);
  };
  both("nodes before", "", double(a.nodesBefore), double(b.nodesBefore));
  both("nodes after", "", double(a.nodesAfter), double(b.nodesAfter));
  both("fusions", "", double(a.fusions()), double(b.fusions()), false);
  std::set<std::string> rules;
  for (const auto& [rule, n] : a.compile.fused) rules.insert(rule);
  for (const auto& [rule, n] : b.compile.fused) rules.insert(rule);
  auto count = [](const RunMetrics& m, const std::string& rule) {
    auto it = m.compile.fused.find(rule);
    return it == m.compile.fused.end() ? 0.0 : double(it->second);
  };
  for (const std::string& rule : rules) both("fusions: " + rule, "", count(a, rule), count(b, rule), false);
  both("TransData", "", double(a.compile.transdata), double(b.compile.transdata));
  both("streams", "", double(a.compile.streams), double(b.compile.streams), false);
  both("events", "", double(a.compile.events), double(b.compile.events));
  auto built = [](const RunMetrics& m, int64_t v) { return m.compile.built ? std::optional<double>(double(v)) : std::nullopt; };
  add("tasks", "", built(a, a.compile.tasks), built(b, b.compile.tasks));
  add("arena", "bytes", built(a, a.compile.arenaBytes), built(b, b.compile.arenaBytes));
  add("lower bound", "bytes", built(a, a.compile.lowerBoundBytes), built(b, b.compile.lowerBoundBytes));
  add("memory without reuse", "bytes", built(a, a.compile.noReuseBytes), built(b, b.compile.noReuseBytes));
  auto sim = [](const RunMetrics& m, double v) { return m.simulated ? std::optional<double>(v) : std::nullopt; };
  add("latency", "us", sim(a, a.latencyUs), sim(b, b.latencyUs));
  std::set<std::string> units;
  for (const auto& [u, v] : a.utilisation) units.insert(u);
  for (const auto& [u, v] : b.utilisation) units.insert(u);
  auto util = [](const RunMetrics& m, const std::string& u) -> std::optional<double> {
    if (!m.simulated) return std::nullopt;
    auto it = m.utilisation.find(u);
    return it == m.utilisation.end() ? 0.0 : it->second;
  };
  for (const std::string& u : units) add("utilisation: " + u, "ratio", util(a, u), util(b, u), false);
  add("host launches", "", sim(a, double(a.hostLaunches)), sim(b, double(b.hostLaunches)));
  auto err = [](const RunMetrics& m) { return m.functional ? std::optional<double>(m.maxAbsError) : std::nullopt; };
  add("max abs error", "", err(a), err(b));
  both("compile time", "ms", a.compileMs, b.compileMs);
  return rows;
}

}  // namespace kiln
