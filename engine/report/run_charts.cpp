#include "report/run_charts.h"

#include <filesystem>
#include <stdexcept>

#include "emulator/timing/soc_profile.h"
#include "emulator/timing/timeline_sim.h"
#include "history/history_db.h"
#include "history/history_emulation.h"
#include "history/history_reader.h"
#include "io/load_error.h"
#include "io/model_loader.h"
#include "ir/graph.h"
#include "ir/model.h"
#include "passes/options.h"
#include "passes/pass_manager.h"
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

std::shared_ptr<const TimelineChart> timelineOf(const HistoryDb& db, const RunInfo& run, const Graph& g,
                                                const Options& options) {
  const SocProfile soc = SocProfile::load(options.getString("soc_version"));
  const std::vector<TimelineRow> rows = readTimeline(db, run.id);
  if (!rows.empty()) return std::make_shared<const TimelineChart>(timelineChartFromRows(rows, g, soc));
  // Same task list and simulation as `kiln run`, so the GUI and the CLI agree on the numbers.
  const std::vector<Task> tasks = buildTaskList(g, soc.aiCores);
  const Timeline timeline = simulateTimeline(tasks, soc, options.getBool("model_sink"));
  return std::make_shared<const TimelineChart>(timelineChartFromSimulation(timeline, soc));
}

}  // namespace

RunCharts loadRunCharts(const std::string& historyPath, int64_t runId, std::shared_ptr<const Model> compiled) {
  RunCharts out;
  try {
    HistoryDb db(historyPath, HistoryDb::Mode::ReadOnly);
    HistoryReader reader(db);
    const RunInfo run = reader.run(runId);
    const std::vector<PassInfo> passes = reader.passes(runId);
    if (run.status == "failed") {
      out.memoryMessage = out.timelineMessage =
          runLabel(run) + " failed (" + run.error + "): the memory plan and the timeline need a compile that completes.";
      return out;
    }
    const bool planned = reached(passes, "MemoryAssignment"), tasked = reached(passes, "TaskGeneration");
    if (!planned)
      out.memoryMessage = runLabel(run) + " stopped before MemoryAssignment (last pass: " + lastPassName(passes) +
                          "): there is no memory plan to draw.";
    if (!tasked)
      out.timelineMessage = runLabel(run) + " stopped before TaskGeneration (last pass: " + lastPassName(passes) +
                            "): there is no task list to simulate.";
    if (!planned && !tasked) return out;
    Options options;
    options.merge(Json::parse(run.optionsJson), "the options of run " + std::to_string(run.id));
    if (!compiled) {
      compiled = recompile(run, passes, options);
      out.recompiled = true;
    }
    const Graph& g = *compiled->graph;
    if (planned) out.memory = std::make_shared<const MemoryChart>(buildMemoryChart(g));
    if (tasked) {
      try {
        out.timeline = timelineOf(db, run, g, options);
      } catch (const std::exception& e) {
        out.timelineMessage = "The timeline could not be simulated: " + std::string(e.what());
      }
    }
  } catch (const LoadError& e) {
    out.memory.reset();
    out.timeline.reset();
    out.memoryMessage = out.timelineMessage = e.describe();
  } catch (const std::exception& e) {
    out.memory.reset();
    out.timeline.reset();
    out.memoryMessage = out.timelineMessage = e.what();
  }
  return out;
}

}  // namespace kiln
