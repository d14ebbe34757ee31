#pragma once
// The batch's reports for CI systems: summary.md (a Markdown table fit for a job summary page) and junit.xml (one
// testcase per model × option set; a failed case or a breached gate is a failed testcase with the reason).
#include <string>

#include "batch/batch_summary.h"

namespace kiln {

std::string summaryMarkdown(const BatchSummary& s);
std::string junitXml(const BatchSummary& s);

}  // namespace kiln
