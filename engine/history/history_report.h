#pragma once
// Text and JSON renderings of history queries, shared by `kiln history list|show` and the batch reports. The CLI
// only parses arguments and calls these; keeping them here keeps the text and --json forms in step.
#include <cstddef>
#include <string>
#include <vector>

#include "history/history_reader.h"
#include "util/json.h"

namespace kiln {

// --- JSON (snake_case keys, as the rest of Kiln's --json output) ---
Json runToJson(const RunInfo& run);
Json runsToJson(const std::vector<RunInfo>& runs);  // array of runToJson
Json passToJson(const PassInfo& pass);
Json passesToJson(const std::vector<PassInfo>& passes);
// runToJson plus "passes": what `kiln history show DB RUN --json` prints.
Json runDetailsToJson(const RunInfo& run, const std::vector<PassInfo>& passes);
Json nodeRowToJson(const NodeRow& n);
Json valueRowToJson(const ValueRow& v);
Json edgeRowToJson(const EdgeRow& e);
Json snapshotToJson(const GraphSnapshot& g);
Json diffToJson(const GraphDiff& d);

// --- text (aligned tables for a terminal) ---
// One line per run: id, status, start, model, nodes before -> after, time, passes, options summary.
std::string formatRuns(const std::vector<RunInfo>& runs);
// The run's shape binding as one line ("batch=1 (dim_policy: batch), ..."); "" when none was recorded.
std::string shapeBindingText(const RunInfo& r);
// The run's header (model, status, times, options, error) and its pass table.
std::string formatRunDetails(const RunInfo& run, const std::vector<PassInfo>& passes);
// Counts per op type, then up to maxRows nodes with their inputs and outputs.
std::string formatSnapshot(const GraphSnapshot& g, size_t maxRows = 200);
// Summary line, then added / removed / changed nodes (with the changed fields and attribute values before -> after),
// edges and values; each section capped at maxRows lines.
std::string formatDiff(const GraphDiff& d, size_t maxRows = 200);

}  // namespace kiln
