#pragma once
// The batch's HTML report: index.html (every case in a table that sorts by any column — a few lines of inline
// JavaScript, nothing fetched) and one page per case (cases/<id>.html) that shows why it failed: its gates, its
// numbers beside the baseline's, fusions by rule against the baseline, the fused graph, the memory plan and the
// simulated timeline as inline SVG, and a link to its Chrome trace. Every text from a model is escaped.
#include <string>

#include "batch/batch_summary.h"

namespace kiln {

class Graph;
struct MemoryChart;
struct TimelineChart;

std::string indexHtml(const BatchSummary& s);

struct CasePageParts {
  const CaseRecord* baseline = nullptr;
  std::string graphSvg, memorySvg, timelineSvg;  // empty: the matching note is shown instead
  std::string graphNote, memoryNote, timelineNote;
  std::string sweepSvg;  // `--sweep`: arena and latency against the swept extent (no section when empty)
};
std::string casePageHtml(const CaseRecord& c, const CasePageParts& parts);

}  // namespace kiln
