#include "batch/batch_run.h"

#include <atomic>
#include <map>
#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <thread>

#include "batch/case_runner.h"
#include "batch/reference_cache.h"
#include "batch/report_files.h"
#include "history/history_db.h"

namespace kiln {

BatchSummary runBatch(const BatchSettings& settings) {
  const auto t0 = std::chrono::steady_clock::now();
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(settings.outDir) / "cases", ec);
  if (ec) throw std::runtime_error(settings.outDir + ": cannot create: " + ec.message());
  // Open (create, migrate, validate) once before any worker: a refused file stops the batch before it starts.
  if (!settings.historyPath.empty()) HistoryDb check(settings.historyPath);

  BatchSummary summary;
  summary.optionSets = settings.optionSets;
  summary.shard = settings.shard;
  summary.jobs = settings.jobs;
  summary.cases.resize(settings.cases.size());
  std::atomic<size_t> next{0};
  size_t done = 0;
  std::mutex progressLock, historyLock;
  std::map<std::string, int> casesPerModel;
  for (const BatchCase& c : settings.cases) ++casesPerModel[c.model];
  ReferenceCache references(casesPerModel);
  std::string workerError;

  auto worker = [&] {
    std::unique_ptr<HistoryDb> db;
    try {
      if (!settings.historyPath.empty()) db = HistoryDb::forAppending(settings.historyPath);
    } catch (const std::exception& e) {
      std::lock_guard lock(progressLock);
      workerError = e.what();
      return;
    }
    CaseContext ctx;
    ctx.outDir = settings.outDir;
    ctx.history = db.get();
    ctx.historyLock = &historyLock;
    ctx.functional = settings.functional;
    ctx.references = &references;
    ctx.baseline = settings.baseline;
    ctx.gates = &settings.gates;
    ctx.sweep = settings.sweep ? &*settings.sweep : nullptr;
    ctx.overlay = settings.overlay;
    for (size_t i = next++; i < settings.cases.size(); i = next++) {
      CaseRecord rec = runCase(settings.cases[i], ctx);
      std::lock_guard lock(progressLock);
      summary.cases[i] = std::move(rec);
      ++done;
      if (settings.progress) settings.progress(summary.cases[i], done, settings.cases.size());
    }
    if (db) {
      std::lock_guard lock(historyLock);
      db.reset();
    }
  };
  const int jobs = std::max(1, std::min<int>(settings.jobs, static_cast<int>(settings.cases.size())));
  std::vector<std::thread> threads;
  for (int j = 1; j < jobs; ++j) threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads) t.join();
  if (!workerError.empty()) throw std::runtime_error("history: " + workerError);

  const auto t1 = std::chrono::steady_clock::now();
  for (const CaseRecord& c : summary.cases) summary.reportMs += c.reportMs;
  // The files carry the totals, so they are measured up to the last file and written once more with them: the second
  // write of four small files is the cost the summary leaves out.
  writeBatchReports(summary, settings.outDir);
  summary.reportMs += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t1).count();
  summary.totalMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  writeBatchReports(summary, settings.outDir);
  return summary;
}

}  // namespace kiln
