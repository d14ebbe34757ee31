#include "report/run_comparison.h"

#include <cmath>
#include <algorithm>
#include <cstdio>
#include <set>
#include <sstream>

#include "report/ge_name_map.h"
#include "util/units.h"

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
  // GE's passes beside Kiln's rules: a GE run's counts under the Kiln rule making the same rewrite
  // (report/ge_name_map.h), "GE <pass>" where there is none.
  const bool mixed = a.compile.byGe != b.compile.byGe;
  auto fusedOf = [mixed](const RunMetrics& m) {
    if (!mixed || !m.compile.byGe) return m.compile.fused;
    std::map<std::string, int64_t> out;
    for (const auto& [pass, n] : m.compile.fused) {
      const std::string rule = kilnRuleForGePass(pass);
      out[rule.empty() ? "GE " + pass : rule] += n;
    }
    return out;
  };
  const std::map<std::string, int64_t> fa = fusedOf(a), fb = fusedOf(b);
  std::set<std::string> rules;
  for (const auto& [rule, n] : fa) rules.insert(rule);
  for (const auto& [rule, n] : fb) rules.insert(rule);
  auto count = [](const std::map<std::string, int64_t>& m, const std::string& rule) {
    auto it = m.find(rule);
    return it == m.end() ? 0.0 : double(it->second);
  };
  for (const std::string& rule : rules) both("fusions: " + rule, "", count(fa, rule), count(fb, rule), false);
  both("TransData", "", double(a.compile.transdata), double(b.compile.transdata));
  // The compiled graphs' ops, in GE's names (both sides counted alike).
  std::set<std::string> ops;
  for (const auto& [op, n] : a.compile.ops) ops.insert(op);
  for (const auto& [op, n] : b.compile.ops) ops.insert(op);
  for (const std::string& op : ops) both("ops: " + op, "", count(a.compile.ops, op), count(b.compile.ops, op));
  both("streams", "", double(a.compile.streams), double(b.compile.streams), false);
  both("events", "", double(a.compile.events), double(b.compile.events));
  auto built = [](const RunMetrics& m, int64_t v) { return m.compile.built ? std::optional<double>(double(v)) : std::nullopt; };
  auto tasks = [](const RunMetrics& m) {
    return m.compile.built && m.compile.tasks >= 0 ? std::optional<double>(double(m.compile.tasks)) : std::nullopt;
  };
  add("tasks", "", tasks(a), tasks(b));
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
  // GE's compile time is not in its files.
  auto compileMs = [](const RunMetrics& m) { return m.compile.byGe ? std::nullopt : std::optional<double>(m.compileMs); };
  add("compile time", "ms", compileMs(a), compileMs(b));
  return rows;
}

namespace {

std::string valueText(const std::optional<double>& v, const std::string& unit) {
  if (!v) return "-";
  if (unit == "bytes") return formatBytes(*v);
  if (unit == "us") return formatDuration(*v / 1e6);
  if (unit == "ms") return formatDuration(*v / 1e3);
  char buf[32];
  if (unit == "ratio") std::snprintf(buf, sizeof buf, "%.1f%%", 100 * *v);
  else std::snprintf(buf, sizeof buf, "%.6g", *v);
  return buf;
}

}  // namespace

std::string comparisonText(const std::vector<MetricComparison>& rows, const std::string& a, const std::string& b) {
  size_t w = 6;
  for (const MetricComparison& r : rows) w = std::max(w, displayWidth(r.metric));
  std::ostringstream os;
  os << "A  " << a << "\nB  " << b << "\n\n"
     << padRight("metric", w + 2) << padLeft("A", 14) << padLeft("B", 14) << padLeft("B - A", 14) << "\n";
  for (const MetricComparison& r : rows) {
    const auto d = r.delta();
    std::string delta = d ? valueText(d, r.unit) : "";
    if (d && *d > 0) delta = "+" + delta;
    os << padRight(r.metric, w + 2) << padLeft(valueText(r.a, r.unit), 14) << padLeft(valueText(r.b, r.unit), 14)
       << padLeft(delta, 14) << (r.verdict() < 0 ? "  better" : r.verdict() > 0 ? "  worse" : "") << "\n";
  }
  return os.str();
}

Json comparisonJson(const std::vector<MetricComparison>& rows, const std::string& a, const std::string& b) {
  Json j = Json::object();
  j.set("a", a);
  j.set("b", b);
  Json list = Json::array();
  for (const MetricComparison& r : rows) {
    Json row = Json::object();
    row.set("metric", r.metric);
    row.set("unit", r.unit);
    row.set("a", r.a ? Json(*r.a) : Json());
    row.set("b", r.b ? Json(*r.b) : Json());
    row.set("delta", r.delta() ? Json(*r.delta()) : Json());
    row.set("verdict", r.verdict() < 0 ? "better" : r.verdict() > 0 ? "worse" : "");
    list.push(std::move(row));
  }
  j.set("rows", std::move(list));
  return j;
}

}  // namespace kiln
