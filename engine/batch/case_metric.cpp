#include "batch/case_metric.h"

#include <cmath>
#include <cstdio>

#include "util/units.h"

namespace kiln {

const std::vector<std::string>& caseMetricNames() {
  static const std::vector<std::string> names = {
      "latency",   "arena",     "lower_bound", "no_reuse",   "weights",       "tasks",         "nodes",
      "nodes_before", "fusions", "fused.<Rule>", "transdata", "streams",      "events",        "max_error",
      "max_rel_error", "host_launches", "compile_ms", "util.<unit>"};
  return names;
}

bool isCaseMetric(const std::string& name) {
  if ((name.rfind("fused.", 0) == 0 && name.size() > 6) || (name.rfind("util.", 0) == 0 && name.size() > 5))
    return true;
  for (const std::string& n : caseMetricNames())
    if (n == name && n.find('<') == std::string::npos) return true;
  return false;
}

std::optional<double> caseMetric(const RunMetrics& m, const std::string& name, std::string* why) {
  auto missing = [&](const char* reason) -> std::optional<double> {
    if (why) *why = name + " not measured (" + reason + ")";
    return std::nullopt;
  };
  const CompileSummary& c = m.compile;
  if (name == "nodes") return double(m.nodesAfter);
  if (name == "nodes_before") return double(m.nodesBefore);
  if (name == "fusions") return double(m.fusions());
  if (name.rfind("fused.", 0) == 0) {
    auto it = c.fused.find(name.substr(6));
    return it == c.fused.end() ? 0.0 : double(it->second);
  }
  if (name == "transdata") return double(c.transdata);
  if (name == "streams") return double(c.streams);
  if (name == "events") return double(c.events);
  if (name == "compile_ms") return m.compileMs;
  if (name == "arena" || name == "lower_bound" || name == "no_reuse" || name == "weights" || name == "tasks") {
    if (!c.built) return missing("the compile did not reach memory assignment and task generation");
    if (name == "arena") return double(c.arenaBytes);
    if (name == "lower_bound") return double(c.lowerBoundBytes);
    if (name == "no_reuse") return double(c.noReuseBytes);
    if (name == "weights") return double(c.weightBytes);
    return double(c.tasks);
  }
  if (name == "latency" || name == "host_launches" || name.rfind("util.", 0) == 0) {
    if (!m.simulated) return missing("no timing simulation");
    if (name == "latency") return m.latencyUs;
    if (name == "host_launches") return double(m.hostLaunches);
    auto it = m.utilisation.find(name.substr(5));
    return it == m.utilisation.end() ? 0.0 : it->second;
  }
  if (name == "max_error" || name == "max_rel_error") {
    if (!m.functional) return missing("no functional emulation");
    return name == "max_error" ? m.maxAbsError : m.maxRelError;
  }
  return missing("unknown metric");
}

const std::vector<MetricColumn>& reportColumns() {
  static const std::vector<MetricColumn> columns = {
      {"nodes_before", "nodes before"}, {"nodes", "nodes after"}, {"fusions", "fusions"},
      {"transdata", "TransData"},       {"streams", "streams"},    {"events", "events"},
      {"arena", "arena"},               {"lower_bound", "lower bound"}, {"no_reuse", "no reuse"},
      {"latency", "latency"},           {"host_launches", "host launches"}, {"max_error", "max error"},
      {"compile_ms", "compile"}};
  return columns;
}

std::string caseMetricText(const RunMetrics& m, const std::string& name) {
  const std::optional<double> v = caseMetric(m, name);
  if (!v) return "—";
  if (name == "arena" || name == "lower_bound" || name == "no_reuse" || name == "weights") return formatBytes(*v);
  if (name == "latency") return formatDuration(*v / 1e6);
  if (name == "compile_ms") return formatDuration(*v / 1e3);
  if (name == "max_error" || name == "max_rel_error" || name.rfind("util.", 0) == 0) {
    if (!std::isfinite(*v)) return "incomparable";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", *v);
    return buf;
  }
  return withThousands(static_cast<int64_t>(*v));
}

}  // namespace kiln
