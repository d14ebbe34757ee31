#include "batch/case_runner.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>

#include "batch/html_report.h"
#include "batch/locked_observer.h"
#include "batch/reference_cache.h"
#include "batch/report_files.h"
#include "emulator/emulation.h"
#include "emulator/precision_gate.h"
#include "emulator/emulation_inputs.h"
#include "emulator/reference_executor.h"
#include "emulator/timing/model_soc.h"
#include "emulator/timing/soc_profile.h"
#include "emulator/timing/timeline_sim.h"
#include "history/history_emulation.h"
#include "history/history_recorder.h"
#include "io/model_loader.h"
#include "layout/node_overlay.h"
#include "layout/pass_view.h"
#include "passes/pass_manager.h"
#include "pipeline/standard_pipeline.h"
#include "report/chrome_trace.h"
#include "report/chart_svg.h"
#include "report/graph_svg.h"
#include "report/memory_chart.h"
#include "report/timeline_chart.h"
#include "variants/variant_compile.h"

namespace kiln {

namespace {

double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// What one case leaves for its report beyond the numbers.
struct CaseWork {
  LoadedModel compiled;
  RunSummary run;
  std::optional<SocProfile> soc;
  std::optional<Timeline> timeline;
  std::optional<EmulationReport> emulation;
  std::optional<PrecisionGate> gate;
  std::string bindingKey;  // the shape binding's text: the reference cache serves only cases bound alike
  std::string failure;  // makes the case fail
  std::string note;     // said on an ok case (functional emulation skipped and why)
};

void recordTimeline(const CaseContext& ctx, const HistoryRecorder& recorder, const Timeline& timeline) {
  std::lock_guard lock(*ctx.historyLock);
  writeTimeline(*ctx.history, recorder.runId(), timelineRows(timeline));
}

// Load, compile, simulate, emulate: each step's failure is the case's reason; what ran stays in `w`.
void compileAndEmulate(const BatchCase& c, const CaseContext& ctx, CaseWork& w) {
  try {
    w.compiled = loadModel(c.model, loadLimits(c.options->options, true));
  } catch (const LoadError& e) {
    w.failure = "cannot load: " + std::string(e.what());
    return;
  }
  Options options = c.options->options;
  std::optional<EmulationInputs> inputs;
  try {
    // The model's own <stem>_io.npz when it ships one, else random data (seed 1): the same inputs as `kiln run`.
    // In timing-only mode only the shipped data is loaded: it fixes symbolic dims, and the shapes must not depend
    // on the mode; random data (all dims 1 or bound) would only cost memory there.
    if (ctx.functional || companionInputs(c.model))
      inputs = loadEmulationInputs(std::nullopt, std::nullopt, c.model, *w.compiled.model, options,
                                   c.options->options.getInt(kEmulatorInputKey));
  } catch (const std::invalid_argument& e) {
    w.failure = std::string("shape binding: ") + e.what();
    return;
  } catch (const std::exception& e) {
    w.note = std::string("no functional emulation: inputs: ") + e.what();
  }
  try {
    w.bindingKey = bindForEmulation(*w.compiled.model, options).text();
  } catch (const std::exception& e) {
    w.failure = std::string("shape binding: ") + e.what();
    return;
  }
  PassManager pm;
  addStandardPasses(pm, options, {});
  std::unique_ptr<HistoryRecorder> recorder;
  std::unique_ptr<LockedObserver> locked;
  if (ctx.history) {
    std::lock_guard lock(*ctx.historyLock);
    recorder = std::make_unique<HistoryRecorder>(*ctx.history, c.model);
    locked = std::make_unique<LockedObserver>(*recorder, *ctx.historyLock);
    pm.addObserver(locked.get());
  }
  // The recorder writes from its destructor when a run is unfinished: it too takes the history's turn.
  auto releaseRecorder = [&] {
    if (!recorder) return;
    std::lock_guard lock(*ctx.historyLock);
    recorder.reset();
  };
  try {
    w.run = pm.run(*w.compiled.model, options);
  } catch (const std::exception& e) {
    w.failure = std::string("compile: ") + e.what();
    releaseRecorder();
    return;
  }
  if (recorder && !recorder->error().empty()) w.failure = "history: " + recorder->error();
  if (w.run.status != RunStatus::Ok) {
    w.failure = "pass " + w.run.error;
    releaseRecorder();
    return;
  }
  try {
    w.soc = SocProfile::load(socVersionFor(*w.compiled.model, options));
    w.timeline = simulateTimeline(buildTaskList(*w.compiled.model->graph, w.soc->aiCores), *w.soc,
                                  options.getBool("model_sink"));
    if (recorder && recorder->runId() > 0 && recorder->error().empty()) recordTimeline(ctx, *recorder, *w.timeline);
  } catch (const std::exception& e) {
    if (w.failure.empty()) w.failure = std::string("timing: ") + e.what();
  }
  releaseRecorder();
  if (!w.failure.empty() || !ctx.functional || !inputs) return;
  // The reference: the original graph (a second copy of the file: the first one is compiled now) on the reference
  // kernels, once per model when a cache is shared.
  auto makeReference = [&]() {
    ReferenceEntry e;
    e.bindingKey = w.bindingKey;
    try {
      auto original = std::make_shared<LoadedModel>(loadModel(c.model, loadLimits(c.options->options, true)));
      e.run = runReference(*original->model, inputs->tensors, withLimits({}, c.options->options));
      e.original = std::shared_ptr<const Model>(original, original->model.get());
    } catch (const NotEmulatable& ex) {
      e.note = std::string("numerics missing: ") + ex.what();
    } catch (const std::exception& ex) {
      // The original model itself does not run on these inputs: at these extents the compile means nothing.
      e.failure = std::string("the original model does not run at the bound shapes: ") + ex.what();
    }
    return e;
  };
  std::shared_ptr<const ReferenceEntry> reference =
      ctx.references ? ctx.references->get(c.model, makeReference) : std::make_shared<const ReferenceEntry>(makeReference());
  // Option sets that bind the model's symbols differently feed it other inputs: their reference is their own.
  if (reference->bindingKey != w.bindingKey) reference = std::make_shared<const ReferenceEntry>(makeReference());
  if (!reference->original) {
    if (!reference->failure.empty()) {
      const std::string hint = w.compiled.model->binding.hint();
      w.failure = reference->failure + (hint.empty() ? "" : "; " + hint);
    }
    w.note = reference->note;
    return;
  }
  w.emulation = emulateCompiled(*reference->original, *w.compiled.model, inputs->tensors, reference->run,
                                withLimits({}, options));
  if (w.emulation->compiledNotEmulatable)
    w.note = "numerics missing: the compiled graph: " + w.emulation->compiledError;
  else if (!w.emulation->compiledError.empty())
    w.failure = "the compiled graph could not run: " + w.emulation->compiledError;
  w.gate = precisionGate(options, *w.compiled.model->graph);
  if (w.emulation->compiledError.empty())
    if (std::string failed = firstFailure(judgeOutputs(*w.emulation, *w.gate)); !failed.empty())
      w.failure = "numerics: " + failed + " (" + w.gate->describe() + ")";
}

// The model at each extent of the sweep (timing only, not recorded): a model without the symbol says so in its reason.
void sweepCase(const BatchCase& c, const SweepSpec& sweep, CaseRecord& rec) {
  try {
    const LoadedModel loaded = loadModel(c.model, loadLimits(c.options->options, true));
    const std::vector<ShapeVariant> variants = sweepVariants(*loaded.model->graph, c.options->options, sweep);
    rec.sweep = sweepChart(c.model, sweep.symbol, compileVariants(c.model, variants));
  } catch (const std::exception& e) {
    const std::string note = std::string("no sweep: ") + e.what();
    rec.metrics.reason = rec.metrics.reason.empty() ? note : rec.metrics.reason + "; " + note;
  }
}

CasePageParts pageParts(const CaseWork& w, const CaseRecord* baseline, const CaseRecord& rec,
                        const std::string& overlayMetric) {
  CasePageParts p;
  p.baseline = baseline;
  if (rec.sweep) p.sweepSvg = sweepChartSvg(*rec.sweep);
  if (!w.compiled.model) {
    p.graphNote = "The model could not be loaded.";
    return p;
  }
  const Graph& g = *w.compiled.model->graph;
  std::optional<TimelineChart> timeline;
  if (w.timeline && w.soc) timeline = timelineChartFromSimulation(*w.timeline, *w.soc);
  try {
    std::optional<layout::Overlay> overlay;
    std::string overlayNote;
    if (!overlayMetric.empty()) {
      const layout::PassView view = layout::passViewOf(g);
      const auto timing = timeline ? nodeTimingOf(*timeline) : std::unordered_map<int64_t, layout::NodeTiming>{};
      const std::vector<std::string> offered = layout::overlayMetrics(view, timing);
      if (std::find(offered.begin(), offered.end(), overlayMetric) != offered.end()) {
        overlay = layout::computeOverlay(view, timing, overlayMetric);
      } else {
        std::string list;
        for (const std::string& m : offered) list += (list.empty() ? "" : ", ") + m;
        overlayNote = "No '" + overlayMetric + "' overlay for this case (it has: " + list + "). ";
      }
    }
    p.graphSvg = compiledGraphSvg(g, 250, overlay ? &*overlay : nullptr);
    p.graphNote = overlayNote;
    if (g.numNodesRecursive() > 250)
      p.graphNote += std::to_string(g.numNodesRecursive()) + " nodes: drawn by groups (name scopes, repeated blocks, "
                     "bodies), closed (open the run in the workbench to expand them).";
  } catch (const std::exception& e) {
    p.graphNote = std::string("No graph drawing: ") + e.what();
  }
  const MemoryChart memory = buildMemoryChart(g);
  if (memory.planned) p.memorySvg = memoryChartSvg(memory);
  else p.memoryNote = "The compile stopped before MemoryAssignment: no memory plan.";
  if (timeline) p.timelineSvg = timelineChartSvg(*timeline);
  else p.timelineNote = "No simulated timeline (the compile did not finish, or the task list could not be simulated).";
  return p;
}

}  // namespace

CaseRecord runCase(const BatchCase& c, const CaseContext& ctx) {
  const auto t0 = std::chrono::steady_clock::now();
  CaseRecord rec;
  rec.id = c.id;
  CaseWork w;
  struct Release {  // this case is done with its model's shared reference, however it ends
    const CaseContext& ctx;
    const std::string& model;
    ~Release() {
      if (ctx.references) ctx.references->release(model);
    }
  };
  try {
    const Release release{ctx, c.model};
    compileAndEmulate(c, ctx, w);
  } catch (const std::bad_alloc&) {
    w.failure = "out of memory";
  } catch (const std::exception& e) {
    w.failure = e.what();
  }
  if (w.compiled.model)
    rec.metrics = collectRunMetrics(*w.compiled.model, w.run, w.timeline ? &*w.timeline : nullptr,
                                    w.emulation && w.emulation->compiledError.empty() ? &*w.emulation : nullptr,
                                    w.gate ? &*w.gate : nullptr);
  rec.metrics.model = c.model;
  rec.metrics.optionSet = c.options->name;
  if (!w.failure.empty()) {
    rec.metrics.status = "failed";
    rec.metrics.reason = w.failure;
  } else if (!w.note.empty()) {
    rec.metrics.reason = w.note;
  }
  const CaseRecord* baseline = ctx.baseline ? findBaselineCase(*ctx.baseline, c.model, c.options->name) : nullptr;
  if (ctx.sweep && rec.metrics.ok()) sweepCase(c, *ctx.sweep, rec);
  if (ctx.gates && rec.metrics.ok())
    for (const GateExpr& g : *ctx.gates) rec.gates.push_back({g.text(), g.evaluate(rec.metrics, baseline ? &baseline->metrics : nullptr)});

  if (!ctx.outDir.empty()) {
    const auto t1 = std::chrono::steady_clock::now();
    const std::filesystem::path dir = std::filesystem::path(ctx.outDir) / "cases";
    try {
      if (w.timeline && w.soc) {
        writeChromeTrace(timelineChartFromSimulation(*w.timeline, *w.soc), std::filesystem::path(c.model).filename().string() + " × " + c.options->name,
                         (dir / (c.id + ".trace.json")).string());
        rec.hasTrace = true;
      }
      rec.hasPage = true;  // the page links its trace; set before rendering so the page shows what exists
      writeTextFile((dir / (c.id + ".html")).string(), casePageHtml(rec, pageParts(w, baseline, rec, ctx.overlay)));
    } catch (const std::exception& e) {
      rec.hasPage = false;
      if (rec.metrics.ok()) {
        rec.metrics.status = "failed";
        rec.metrics.reason = std::string("report: ") + e.what();
      }
    }
    rec.reportMs = msSince(t1);
  }
  rec.wallMs = msSince(t0);
  return rec;
}

}  // namespace kiln
