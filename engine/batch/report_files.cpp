#include "batch/report_files.h"

#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "batch/html_report.h"
#include "batch/text_reports.h"

namespace kiln {

void writeTextFile(const std::string& path, const std::string& text) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw std::runtime_error(path + ": cannot write");
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (std::fclose(f) != 0 || !ok) throw std::runtime_error(path + ": cannot write (disk full?)");
}

void writeBatchReports(const BatchSummary& s, const std::string& outDir) {
  const std::filesystem::path dir(outDir);
  writeTextFile((dir / "summary.json").string(), batchSummaryToJson(s).dump(2) + "\n");
  writeTextFile((dir / "summary.md").string(), summaryMarkdown(s));
  writeTextFile((dir / "junit.xml").string(), junitXml(s));
  writeTextFile((dir / "index.html").string(), indexHtml(s));
}

}  // namespace kiln
