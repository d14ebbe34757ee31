#include "batch/report_merge.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>

#include "util/load_error.h"

namespace kiln {

namespace fs = std::filesystem;

BatchSummary mergeReports(const std::vector<std::string>& dirs, const std::string& outDir) {
  BatchSummary merged;
  std::map<std::string, std::string> idFrom;  // case id -> the directory it came from
  std::set<std::string> sets;
  std::vector<std::pair<CaseRecord, std::string>> cases;
  for (const std::string& dir : dirs) {
    const std::string file = (fs::path(dir) / "summary.json").string();
    BatchSummary s = readBatchSummary(file);
    for (const std::string& o : s.optionSets)
      if (sets.insert(o).second) merged.optionSets.push_back(o);
    merged.jobs = std::max(merged.jobs, s.jobs);
    merged.totalMs = std::max(merged.totalMs, s.totalMs);  // shards run side by side: the slowest is the wall time
    merged.reportMs += s.reportMs;
    for (CaseRecord& c : s.cases) {
      if (auto [it, added] = idFrom.emplace(c.id, dir); !added)
        throw LoadError(file, "case '" + c.id + "' is also in " + it->second + " (the same shard merged twice?)");
      cases.emplace_back(std::move(c), dir);
    }
  }
  std::sort(cases.begin(), cases.end(), [](const auto& a, const auto& b) {
    return std::tie(a.first.metrics.model, a.first.metrics.optionSet) <
           std::tie(b.first.metrics.model, b.first.metrics.optionSet);
  });
  std::error_code ec;
  fs::create_directories(fs::path(outDir) / "cases", ec);
  if (ec) throw std::runtime_error(outDir + ": cannot create: " + ec.message());
  for (auto& [c, dir] : cases) {
    // Ids were checked to be plain file names (readBatchSummary), so these paths stay inside both folders.
    for (auto [has, suffix] : {std::pair{&c.hasPage, ".html"}, std::pair{&c.hasTrace, ".trace.json"}}) {
      if (!*has) continue;
      const fs::path from = fs::path(dir) / "cases" / (c.id + suffix);
      const fs::path to = fs::path(outDir) / "cases" / (c.id + suffix);
      if (fs::equivalent(from, to, ec)) continue;
      fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
      if (ec) *has = false;  // a shard that lost a file: the merged report shows the case without it
      ec.clear();
    }
    merged.cases.push_back(std::move(c));
  }
  return merged;
}

}  // namespace kiln
