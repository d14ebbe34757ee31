#include "batch/text_reports.h"

#include <cstdio>

#include "batch/case_metric.h"
#include "util/units.h"
#include "util/xml_escape.h"

namespace kiln {

namespace {

// Markdown table cells: a '|' or a line break would end the cell or the row.
std::string mdCell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n' || c == '\r') out += ' ';
    else out += c;
  }
  return out;
}

std::string seconds(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", ms / 1000.0);
  return buf;
}

}  // namespace

std::string summaryMarkdown(const BatchSummary& s) {
  std::string md = "## Kiln batch: " + std::to_string(s.cases.size() - static_cast<size_t>(s.failed())) + " of " +
                   std::to_string(s.cases.size()) + " cases passed";
  if (!s.shard.empty()) md += " (shard " + s.shard + ")";
  md += "\n\n";
  md += "| case | status |";
  std::string rule = "|---|---|";
  for (const MetricColumn& c : reportColumns()) {
    md += " " + c.title + " |";
    rule += "---:|";
  }
  md += "\n" + rule + "\n";
  for (const CaseRecord& c : s.cases) {
    md += "| " + mdCell(c.metrics.model + " × " + c.metrics.optionSet) + " | " + (c.passed() ? "ok" : "**FAILED**") + " |";
    for (const MetricColumn& col : reportColumns()) md += " " + caseMetricText(c.metrics, col.name) + " |";
    md += "\n";
  }
  if (s.failed()) {
    md += "\n### Failures\n\n";
    for (const CaseRecord& c : s.cases)
      if (!c.passed()) md += "- **" + mdCell(c.metrics.model + " × " + c.metrics.optionSet) + "**: " + mdCell(c.failure()) + "\n";
  }
  // A pass says nothing about numbers that were not measured: those cases are listed with the reason.
  std::string missing;
  for (const CaseRecord& c : s.cases)
    if (c.passed() && !c.metrics.functional && !c.metrics.reason.empty())
      missing += "- " + mdCell(c.metrics.model + " × " + c.metrics.optionSet) + ": " + mdCell(c.metrics.reason) + "\n";
  if (!missing.empty()) md += "\n### Numerics not measured\n\n" + missing;
  if (s.skippedGates()) {
    md += "\n### Skipped gates\n\n";
    for (const CaseRecord& c : s.cases)
      for (const GateRecord& g : c.gates)
        if (g.outcome.state == GateOutcome::State::Skipped)
          md += "- " + mdCell(c.metrics.model + " × " + c.metrics.optionSet) + ": `" + mdCell(g.expr) + "`: " +
                mdCell(g.outcome.detail) + "\n";
  }
  md += "\n" + std::to_string(s.cases.size()) + " cases in " + formatDuration(s.totalMs / 1e3) + " with " +
        std::to_string(s.jobs) + (s.jobs == 1 ? " job" : " jobs") + "; writing reports took " +
        formatDuration(s.reportMs / 1e3) + ". Details: index.html.\n";
  return md;
}

std::string junitXml(const BatchSummary& s) {
  std::string x = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  x += "<testsuites name=\"kiln batch\" tests=\"" + std::to_string(s.cases.size()) + "\" failures=\"" +
       std::to_string(s.failed()) + "\" time=\"" + seconds(s.totalMs) + "\">\n";
  x += "  <testsuite name=\"kiln batch" + xmlEscape(s.shard.empty() ? "" : " shard " + s.shard) + "\" tests=\"" +
       std::to_string(s.cases.size()) + "\" failures=\"" + std::to_string(s.failed()) + "\" errors=\"0\" time=\"" +
       seconds(s.totalMs) + "\">\n";
  for (const CaseRecord& c : s.cases) {
    x += "    <testcase classname=\"kiln." + xmlEscape(c.metrics.optionSet) + "\" name=\"" + xmlEscape(c.metrics.model) +
         "\" time=\"" + seconds(c.wallMs) + "\"";
    if (c.passed()) {
      x += "/>\n";
      continue;
    }
    const std::string why = c.failure();
    x += ">\n      <failure message=\"" + xmlEscape(why) + "\" type=\"" +
         (c.metrics.ok() ? "gate" : "case") + "\">" + xmlEscape(why) + "</failure>\n    </testcase>\n";
  }
  x += "  </testsuite>\n</testsuites>\n";
  return x;
}

}  // namespace kiln
