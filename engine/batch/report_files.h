#pragma once
// Writing the batch's report files into --out: summary.json, summary.md, junit.xml, index.html (the case pages and
// traces are written by each case as it finishes).
#include <string>

#include "batch/batch_summary.h"

namespace kiln {

// Throws std::runtime_error naming the file when it cannot be written.
void writeTextFile(const std::string& path, const std::string& text);
void writeBatchReports(const BatchSummary& s, const std::string& outDir);

}  // namespace kiln
