#include "batch/html_report.h"

#include <cmath>
#include <set>

#include "batch/case_metric.h"
#include "util/units.h"
#include "util/xml_escape.h"

namespace kiln {

namespace {

const char* kStyle = R"css(
body{font-family:sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:0.5em 0 1.5em}
th,td{border:1px solid #ddd;padding:3px 8px;font-size:13px}
td.n{text-align:right;font-variant-numeric:tabular-nums}
th{background:#f0f0f0;cursor:pointer;user-select:none}
th[data-dir=asc]::after{content:" ▲"} th[data-dir=desc]::after{content:" ▼"}
.ok{color:#2a7d2a;font-weight:bold} .failed{color:#c62828;font-weight:bold} .skipped{color:#888}
.worse{background:#fde0dc} .better{background:#e3f4e1}
.chart{overflow:auto;max-width:100%;border:1px solid #eee;margin-bottom:1.5em}
.note{color:#666}
)css";

// Sorts a table.sortable by the clicked column: numbers by their data-v, text otherwise.
const char* kSortScript = R"js(
document.querySelectorAll('table.sortable th').forEach(function(th,i){th.addEventListener('click',function(){
var t=th.closest('table'),b=t.tBodies[0],rows=Array.prototype.slice.call(b.rows),asc=th.dataset.dir!=='asc';
t.querySelectorAll('th').forEach(function(h){delete h.dataset.dir});th.dataset.dir=asc?'asc':'desc';
function key(r){var c=r.cells[i];return c.dataset.v!==undefined?parseFloat(c.dataset.v):c.textContent.trim().toLowerCase()}
rows.sort(function(a,b){var x=key(a),y=key(b);return (x<y?-1:x>y?1:0)*(asc?1:-1)});rows.forEach(function(r){b.appendChild(r)})})});
)js";

std::string page(const std::string& title, const std::string& body) {
  return "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" + xmlEscape(title) + "</title><style>" +
         kStyle + "</style></head><body>\n" + body + "<script>" + kSortScript + "</script></body></html>\n";
}

std::string numberAttr(std::optional<double> v) {
  if (!v || !std::isfinite(*v)) return " data-v=\"-1e308\"";
  char buf[40];
  std::snprintf(buf, sizeof buf, " data-v=\"%.17g\"", *v);
  return buf;
}

std::string statusCell(const CaseRecord& c) {
  return c.passed() ? "<td class=\"ok\">ok</td>" : "<td class=\"failed\">FAILED</td>";
}

}  // namespace

std::string indexHtml(const BatchSummary& s) {
  std::string b = "<h1>Kiln batch</h1>\n<p><span class=\"" + std::string(s.failed() ? "failed" : "ok") + "\">" +
                  std::to_string(s.cases.size() - static_cast<size_t>(s.failed())) + " of " +
                  std::to_string(s.cases.size()) + " cases passed</span>";
  if (!s.shard.empty()) b += " · shard " + xmlEscape(s.shard);
  b += " · " + formatDuration(s.totalMs / 1e3) + " with " + std::to_string(s.jobs) + " job(s) · reports written in " +
       formatDuration(s.reportMs / 1e3) + "</p>\n";
  b += "<p class=\"note\">Click a heading to sort; a case opens its page (gates, baseline, fused graph, memory, "
       "timeline).</p>\n<table class=\"sortable\"><thead><tr><th>model</th><th>option set</th><th>status</th>";
  for (const MetricColumn& c : reportColumns()) b += "<th>" + xmlEscape(c.title) + "</th>";
  b += "<th>wall</th><th>why</th></tr></thead><tbody>\n";
  for (const CaseRecord& c : s.cases) {
    const std::string model = xmlEscape(c.metrics.model);
    b += "<tr><td>" + (c.hasPage ? "<a href=\"cases/" + xmlEscape(c.id) + ".html\">" + model + "</a>" : model) +
         "</td><td>" + xmlEscape(c.metrics.optionSet) + "</td>" + statusCell(c);
    for (const MetricColumn& col : reportColumns())
      b += "<td class=\"n\"" + numberAttr(caseMetric(c.metrics, col.name)) + ">" +
           xmlEscape(caseMetricText(c.metrics, col.name)) + "</td>";
    b += "<td class=\"n\"" + numberAttr(c.wallMs) + ">" + formatDuration(c.wallMs / 1e3) + "</td><td>" +
         xmlEscape(c.failure()) + "</td></tr>\n";
  }
  b += "</tbody></table>\n";
  return page("Kiln batch", b);
}

namespace {

// A row "metric | this run | baseline", marked worse/better when the baseline differs (more is worse for
// everything tabulated except fusions and utilisation, as in the workbench's compare view).
std::string compareRow(const std::string& title, const std::string& name, const RunMetrics& m, const RunMetrics* base) {
  std::string row = "<tr><td>" + xmlEscape(title) + "</td><td class=\"n\">" + xmlEscape(caseMetricText(m, name)) + "</td>";
  if (!base) return row + "</tr>\n";
  const auto now = caseMetric(m, name), was = caseMetric(*base, name);
  std::string cls;
  if (now && was && *now != *was && name != "compile_ms" && name != "nodes_before") {
    const bool moreIsBetter = name == "fusions" || name.rfind("fused.", 0) == 0 || name.rfind("util.", 0) == 0;
    cls = ((*now > *was) == moreIsBetter) ? " class=\"better\"" : " class=\"worse\"";
  }
  return row + "<td class=\"n\">" + xmlEscape(caseMetricText(*base, name)) + "</td><td" + cls + ">" +
         (cls.empty() ? "" : cls.find("worse") != std::string::npos ? "worse" : "better") + "</td></tr>\n";
}

std::string chartSection(const std::string& title, const std::string& svg, const std::string& note) {
  std::string s = "<h2>" + xmlEscape(title) + "</h2>\n";
  if (!note.empty()) s += "<p class=\"note\">" + xmlEscape(note) + "</p>\n";
  if (!svg.empty()) s += "<div class=\"chart\">" + svg + "</div>\n";
  return s;
}

}  // namespace

std::string casePageHtml(const CaseRecord& c, const CasePageParts& parts) {
  const RunMetrics& m = c.metrics;
  const RunMetrics* base = parts.baseline ? &parts.baseline->metrics : nullptr;
  std::string b = "<p><a href=\"../index.html\">← all cases</a></p>\n<h1>" + xmlEscape(m.model) + " × " +
                  xmlEscape(m.optionSet) + "</h1>\n<p>" +
                  (c.passed() ? "<span class=\"ok\">passed</span>" : "<span class=\"failed\">FAILED</span>") +
                  (c.passed() ? "" : ": " + xmlEscape(c.failure())) + "</p>\n";
  if (m.ok() && !m.reason.empty()) b += "<p class=\"note\">" + xmlEscape(m.reason) + "</p>\n";
  if (!c.gates.empty()) {
    b += "<h2>Gates</h2>\n<table><tr><th>gate</th><th>result</th><th>detail</th></tr>\n";
    for (const GateRecord& g : c.gates)
      b += "<tr><td><code>" + xmlEscape(g.expr) + "</code></td><td class=\"" + gateStateName(g.outcome.state) + "\">" +
           gateStateName(g.outcome.state) + "</td><td>" + xmlEscape(g.outcome.detail) + "</td></tr>\n";
    b += "</table>\n";
  }
  b += "<h2>Numbers</h2>\n<table><tr><th>metric</th><th>this run</th>";
  if (base) b += "<th>baseline (" + xmlEscape(base->optionSet) + ")</th><th></th>";
  b += "</tr>\n";
  for (const MetricColumn& col : reportColumns()) b += compareRow(col.title, col.name, m, base);
  b += compareRow("tasks", "tasks", m, base) + compareRow("weights", "weights", m, base) +
       compareRow("max rel error", "max_rel_error", m, base);
  for (const auto& [unit, u] : m.utilisation) b += compareRow(unit + " utilisation", "util." + unit, m, base);
  b += "</table>\n";

  std::set<std::string> rules;
  for (const auto& [rule, n] : m.compile.fused) rules.insert(rule);
  if (base)
    for (const auto& [rule, n] : base->compile.fused) rules.insert(rule);
  b += "<h2>Fusions by rule</h2>\n";
  if (rules.empty()) b += "<p class=\"note\">No fusion rule fired" + std::string(base ? ", here or in the baseline" : "") + ".</p>\n";
  else {
    b += "<table><tr><th>rule</th><th>this run</th>" + std::string(base ? "<th>baseline</th><th></th>" : "") + "</tr>\n";
    for (const std::string& rule : rules) b += compareRow(rule, "fused." + rule, m, base);
    b += "</table>\n";
  }
  b += chartSection("Compiled graph", parts.graphSvg, parts.graphNote);
  if (!parts.graphSvg.empty())
    b += "<p class=\"note\">orange: fused nodes (hover for the rule) · purple: layout conversions · blue: Cube · "
         "green: Vector · yellow: AI CPU · grey: host/other</p>\n";
  b += chartSection("Memory plan", parts.memorySvg, parts.memoryNote);
  b += chartSection("Simulated timeline", parts.timelineSvg, parts.timelineNote);
  if (!parts.sweepSvg.empty()) b += chartSection("Against " + (c.sweep ? c.sweep->symbol : std::string("the extent")), parts.sweepSvg, "");
  if (c.hasTrace)
    b += "<p><a href=\"" + xmlEscape(c.id) + ".trace.json\">Chrome trace</a> (open in Perfetto or chrome://tracing)</p>\n";
  return page(m.model + " × " + m.optionSet, b);
}

}  // namespace kiln
