#pragma once
// `kiln batch --merge-reports DIR...`: the shards of a CI matrix joined into one report. Each DIR's summary.json is
// read as untrusted input (readBatchSummary), the cases are put back in the batch's sorted order and their pages and
// traces copied into OUT/cases.
#include <string>
#include <vector>

#include "batch/batch_summary.h"

namespace kiln {

// Throws LoadError naming a bad or missing summary.json, or a case id that two directories both hold;
// std::runtime_error when OUT cannot be written.
BatchSummary mergeReports(const std::vector<std::string>& dirs, const std::string& outDir);

}  // namespace kiln
