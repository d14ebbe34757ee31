// `kiln batch` benchmark (issue 9): the shared corpus (every .onnx and .om under ../shared/models except ONNX
// Runtime's fusion suite) × the default and O1 option sets with 2 jobs — the target is the whole batch within
// 2 minutes on a 2-core machine. Run twice: timing only (--timing-only), then with the functional emulation (what
// `kiln batch` does by default; the large CNNs' reference and arena runs dominate it). Prints the time per case
// (compile, the whole case, its page and trace) and the report-writing overhead, and writes JSON. The reports go to
// bench_batch_reports/ next to the JSON file. Asserts nothing: speed is measured, not gated.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>

#include "batch/batch_run.h"
#include "bench_json.h"
#include "util/units.h"

using namespace kiln;
namespace fs = std::filesystem;

int main(int argc, char** argv) {
  const std::string jsonPath = argc > 1 ? argv[1] : KILN_BENCH_OUT_DIR "/bench_batch.json";
  const fs::path corpus = (fs::path(KILN_SHARED_DIR) / "models").lexically_normal();
  std::vector<std::string> models;
  if (fs::is_directory(corpus))
    for (const auto& e : fs::recursive_directory_iterator(corpus))
      if ((e.path().extension() == ".onnx" || e.path().extension() == ".om") &&
          e.path().string().find("ort_fusion_suite") == std::string::npos)
        models.push_back(e.path().string());
  if (models.empty()) {
    std::fprintf(stderr, "note: %s not found; nothing to measure\n", corpus.c_str());
    return writeBenchJson(Json::object(), jsonPath);
  }
  const std::vector<OptionSet> sets = loadOptionSets({KILN_SOURCE_DIR "/resources/options/default.json",
                                                      KILN_SOURCE_DIR "/resources/options/o1.json"});
  Json out = Json::object();
  for (const bool functional : {false, true}) {
    const char* mode = functional ? "functional" : "timing_only";
    BatchSettings settings;
    settings.cases = batchCases(findModels(models), sets);
    for (const OptionSet& s : sets) settings.optionSets.push_back(s.name);
    settings.outDir = (fs::path(jsonPath).parent_path() / "bench_batch_reports" / mode).string();
    settings.jobs = 2;
    settings.functional = functional;
    settings.progress = [](const CaseRecord&, size_t done, size_t total) { std::fprintf(stderr, "\r%zu/%zu", done, total); };
    const BatchSummary s = runBatch(settings);
    std::fprintf(stderr, "\n");

    std::printf("\n%s\n%-52s %-8s %-6s %10s %10s %10s\n", mode, "model", "options", "status", "compile", "case",
                "report");
    Json rows = Json::array();
    double slowest = 0, caseMs = 0;
    for (const CaseRecord& c : s.cases) {
      const std::string model = fs::path(c.metrics.model).lexically_relative(corpus).string();
      std::printf("%-52s %-8s %-6s %10s %10s %10s\n", model.c_str(), c.metrics.optionSet.c_str(),
                  c.passed() ? "ok" : "FAILED", formatDuration(c.metrics.compileMs / 1e3).c_str(),
                  formatDuration(c.wallMs / 1e3).c_str(), formatDuration(c.reportMs / 1e3).c_str());
      slowest = std::max(slowest, c.wallMs);
      caseMs += c.wallMs;
      Json row = Json::object();
      row.set("model", model);
      row.set("option_set", c.metrics.optionSet);
      row.set("passed", c.passed());
      if (!c.passed()) row.set("why", c.failure());
      row.set("functional", c.metrics.functional);
      row.set("compile_ms", c.metrics.compileMs);
      row.set("case_ms", c.wallMs);
      row.set("report_ms", c.reportMs);
      rows.push(std::move(row));
    }
    std::printf("%zu cases (%d failed) in %s with 2 jobs (target <= 2 min); mean %s per case, slowest %s\n",
                s.cases.size(), s.failed(), formatDuration(s.totalMs / 1e3).c_str(),
                formatDuration(caseMs / double(s.cases.size()) / 1e3).c_str(), formatDuration(slowest / 1e3).c_str());
    std::printf("report writing: %s (%.1f%% of the cases' summed time: per-case pages with SVG and traces, summary "
                "files)\n",
                formatDuration(s.reportMs / 1e3).c_str(), 100 * s.reportMs / std::max(caseMs, 1e-9));
    Json m = Json::object();
    m.set("cases", std::move(rows));
    m.set("total_ms", s.totalMs);
    m.set("report_ms", s.reportMs);
    m.set("case_ms_sum", caseMs);
    m.set("jobs", 2);
    m.set("failed", s.failed());
    out.set(mode, std::move(m));
  }
  return writeBenchJson(out, jsonPath);
}
