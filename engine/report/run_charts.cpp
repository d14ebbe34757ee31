#include "report/run_charts.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <stdexcept>

#include "emulator/timing/model_soc.h"
#include "emulator/timing/soc_profile.h"
#include "emulator/timing/timeline_sim.h"
#include "history/history_db.h"
#include "history/history_emulation.h"
#include "history/history_reader.h"
#include "history/measured_import.h"
#include "history/measured_tasks.h"
#include "report/measured_timeline.h"
#include "util/load_error.h"
#include "io/model_loader.h"
#include "ir/graph.h"
#include "ir/model.h"
#include "options/options.h"
#include "passes/pass_manager.h"
#include "pipeline/standard_pipeline.h"
#include "schedule/task_list.h"
#include "util/json.h"

namespace kiln {

namespace {

bool reached(const std::vector<PassInfo>& passes, const std::string& name) {
  for (const PassInfo& p : passes)
    if (p.seq > 0 && p.name == name && p.error.empty()) return true;
  return false;
}

std::string runLabel(const RunInfo& run) { return "Run " + std::to_string(run.id); }

std::string lastPassName(const std::vector<PassInfo>& passes) {
  return passes.empty() || passes.back().seq == 0 ? std::string("the imported graph") : passes.back().name;
}

// The run's compiled graph, rebuilt: its model compiled again with its options, up to the pass it recorded last.
std::shared_ptr<const Model> recompile(const RunInfo& run, const std::vector<PassInfo>& passes, const Options& options) {
  if (!std::filesystem::is_regular_file(run.modelPath))
    throw std::runtime_error(run.modelPath + " is no longer there; the history does not keep the execution order "
                             "these charts need, so they are drawn from the model compiled again");
  LoadedModel loaded = loadModel(run.modelPath);
  PassManager pm;
  addStandardPasses(pm, options);
  if (run.status != "ok" && !passes.empty() && passes.back().seq > 0) pm.setUntil(passes.back().name);
  const RunSummary s = pm.run(*loaded.model, options);
  if (s.status == RunStatus::Failed)
    throw std::runtime_error("compiling " + run.modelPath + " again failed: " + s.error);
  if (run.nodesAfter && *run.nodesAfter != s.nodesAfter)
    throw std::runtime_error("compiling " + run.modelPath + " again gave " + std::to_string(s.nodesAfter) +
                             " nodes where the run recorded " + std::to_string(*run.nodesAfter) +
                             ": the file or Kiln changed since");
  return std::shared_ptr<const Model>(std::move(loaded.model));
}

// The recorded passes as the RunSummary the compile returned (what summarizeCompile and the metrics read).
RunSummary summaryFromHistory(const RunInfo& run, const std::vector<PassInfo>& passes) {
  RunSummary s;
  s.status = run.status == "ok" ? RunStatus::Ok : run.status == "failed" ? RunStatus::Failed : RunStatus::Stopped;
  s.error = run.error;
  s.nodesBefore = run.nodesBefore.value_or(0);
  s.nodesAfter = run.nodesAfter.value_or(0);
  s.ms = run.totalMs.value_or(0);
  for (const PassInfo& p : passes) {
    if (p.seq == 0) continue;
    PassRecord r;
    r.index = p.seq;
    r.name = p.name;
    r.ms = p.ms;
    r.changed = p.changed;
    r.counters = p.counters;
    r.nodesBefore = p.nodesBefore.value_or(0);
    r.nodesAfter = p.nodesAfter.value_or(0);
    r.error = p.error;
    s.passes.push_back(std::move(r));
  }
  return s;
}

// A run `kiln history import DB PROFILE` made of a profile alone (history/measured_import.h).
bool isMeasuredOnlyRun(const RunInfo& run) {
  try {
    const Json j = Json::parse(run.optionsJson, 8);
    const Json* source = j.isObject() ? j.find("source") : nullptr;
    return source && source->isString() && source->asString() == kMeasuredRunSource;
  } catch (const JsonError&) {
    return false;
  }
}

// The error of the last pass the verifier measured, as the run's functional error.
void addVerifiedError(RunMetrics& m, const std::vector<PassAccuracyRow>& rows) {
  for (auto it = rows.rbegin(); it != rows.rend(); ++it)
    if (it->maxAbs && it->maxRel) {
      m.functional = true;
      m.maxAbsError = *it->maxAbs;
      m.maxRelError = *it->maxRel;
      return;
    }
}

}  // namespace

RunCharts loadRunCharts(const std::string& historyPath, int64_t runId, std::shared_ptr<const Model> compiled) {
  RunCharts out;
  try {
    HistoryDb db(historyPath, HistoryDb::Mode::ReadOnly);
    HistoryReader reader(db);
    const RunInfo run = reader.run(runId);
    const std::vector<PassInfo> passes = reader.passes(runId);
    const MeasuredRun measured = readMeasuredRun(db, runId);
    if (isMeasuredOnlyRun(run)) {
      // A profile imported on its own: its measured tasks are the timeline; there is no compile to plan or simulate.
      TimelineChart chart;
      chart.source = "measured (" + measured.profile.source + ")";
      addMeasuredTasks(chart, measured);
      if (chart.tasks.empty()) out.timelineMessage = runLabel(run) + ": the profile's tasks are not in the history.";
      else out.timeline = std::make_shared<const TimelineChart>(std::move(chart));
      out.memoryMessage = runLabel(run) + " is a measured profile: no memory plan of Kiln's to draw" +
                          (measured.profile.staticTotalBytes
                               ? " (static memory reported: " + std::to_string(*measured.profile.staticTotalBytes) +
                                     " bytes)."
                               : ".");
      return out;
    }
    if (run.status == "failed") {
      out.memoryMessage = out.timelineMessage =
          runLabel(run) + " failed (" + run.error + "): the memory plan and the timeline need a compile that completes.";
      return out;
    }
    // An import of GE's files (history/ge_dump_import.h) records GE's stages, not Kiln's passes: its charts are GE's
    // own plan, read from the run's model file (the last stage), as for a compiled .om, which runs no pass of ours.
    const bool imported = isImportedRun(run);
    const bool precompiled = imported || (passes.size() <= 1 && isGeFormat(detectModelFormat(run.modelPath)));
    const bool planned = precompiled || reached(passes, "MemoryAssignment");
    const bool tasked = precompiled || reached(passes, "TaskGeneration");
    if (!planned)
      out.memoryMessage = runLabel(run) + " stopped before MemoryAssignment (last pass: " + lastPassName(passes) +
                          "): there is no memory plan to draw.";
    if (!tasked)
      out.timelineMessage = runLabel(run) + " stopped before TaskGeneration (last pass: " + lastPassName(passes) +
                            "): there is no task list to simulate.";
    if (!planned && !tasked) return out;
    Options options;
    if (!imported) options.merge(Json::parse(run.optionsJson), "the options of run " + std::to_string(run.id));
    if (!compiled && precompiled) {
      if (!std::filesystem::is_regular_file(run.modelPath))
        throw std::runtime_error(run.modelPath + " is no longer there: GE's plan is read from it");
      LoadedModel loaded = loadModel(run.modelPath);
      if (!loaded.model->precompiled) {
        out.memoryMessage = out.timelineMessage =
            runLabel(run) + ": GE's last stage here (" + std::filesystem::path(run.modelPath).filename().string() +
            ") carries no plan; GE assigns memory and streams at its Build stage.";
        return out;
      }
      compiled = std::shared_ptr<const Model>(std::move(loaded.model));
    }
    if (!compiled) {
      compiled = recompile(run, passes, options);
      out.recompiled = true;
    }
    out.compiled = compiled;
    const Graph& g = *compiled->graph;
    if (planned) {
      auto chart = std::make_shared<MemoryChart>(buildMemoryChart(g));
      chart->measuredLive = measuredStaticLive(measured.staticMemory, int64_t(chart->stepNodes.size()));
      for (int64_t b : chart->measuredLive) chart->measuredPeak = std::max(chart->measuredPeak, b);
      std::shared_ptr<const MemoryChart> memory = std::move(chart);
      if (memory->planned) out.memory = std::move(memory);
      else out.memoryMessage = runLabel(run) + ": the model records no memory offsets.";
    }
    std::optional<Timeline> simulated;
    if (tasked) {
      try {
        // Same task list and simulation as `kiln run`, so the GUI and the CLI agree on the numbers; the timeline
        // `kiln run --history` recorded is drawn when the history has it.
        const SocProfile soc = SocProfile::load(socVersionFor(*compiled, options));
        simulated = simulateTimeline(buildTaskList(g, soc.aiCores), soc, options.getBool("model_sink"));
        const std::vector<TimelineRow> rows = readTimeline(db, run.id);
        TimelineChart chart = rows.empty() ? timelineChartFromSimulation(*simulated, soc) : timelineChartFromRows(rows, g, soc);
        addMeasuredTasks(chart, measured);  // a profile imported beside the run: its lanes above the simulated ones
        out.timeline = std::make_shared<const TimelineChart>(std::move(chart));
      } catch (const std::exception& e) {
        out.timelineMessage = "The timeline could not be simulated: " + std::string(e.what());
      }
    }
    out.metrics = collectRunMetrics(*compiled, summaryFromHistory(run, passes), simulated ? &*simulated : nullptr,
                                    nullptr);
    out.metrics.model = run.modelPath;
    out.metrics.optionSet = run.optionsSummary;
    addVerifiedError(out.metrics, readPassAccuracy(db, run.id));
    out.hasMetrics = true;
  } catch (const LoadError& e) {
    out.hasMetrics = false;
    out.compiled.reset();
    out.memory.reset();
    out.timeline.reset();
    out.memoryMessage = out.timelineMessage = e.describe();
  } catch (const std::exception& e) {
    out.hasMetrics = false;
    out.memory.reset();
    out.timeline.reset();
    out.memoryMessage = out.timelineMessage = e.what();
  }
  return out;
}

}  // namespace kiln
