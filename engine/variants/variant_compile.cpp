#include "variants/variant_compile.h"

#include <algorithm>

#include "emulator/timing/model_soc.h"
#include "emulator/timing/soc_profile.h"
#include "emulator/timing/timeline_sim.h"
#include "history/history_recorder.h"
#include "io/model_loader.h"
#include "passes/pass_manager.h"
#include "passes/prepare/binding_fit.h"
#include "pipeline/standard_pipeline.h"
#include "schedule/task_list.h"

namespace kiln {

std::vector<VariantResult> compileVariants(const std::string& modelPath, const std::vector<ShapeVariant>& variants,
                                           const VariantCompileOptions& options) {
  std::vector<VariantResult> out;
  for (const ShapeVariant& v : variants) {
    if (options.cancel && options.cancel->load()) break;
    VariantResult r;
    r.variant = v;
    r.metrics.model = modelPath;
    r.metrics.optionSet = v.label;
    try {
      LoadedModel loaded = loadModel(modelPath, loadLimits(v.options));
      // A point past one of the model's tables compiles with unsized tensors and numbers that mean nothing: it is
      // reported as failed with the reason, and left out of charts.
      if (!loaded.model->precompiled) {
        const BindingFit fit = checkBindingFit(*loaded.model, v.options.bindingRequest());
        if (!fit.fits()) {
          r.binding = resolveShapeBinding(*loaded.model->graph, v.options.bindingRequest());
          r.metrics.status = "failed";
          r.metrics.reason = "the model cannot take " + r.binding.shortText() + ": " + fit.problem();
          out.push_back(std::move(r));
          if (options.progress) options.progress(out.size(), variants.size(), out.back());
          continue;
        }
      }
      PassManager pm;
      addStandardPasses(pm, v.options);
      if (options.cancel) pm.setCancelFlag(options.cancel);
      std::unique_ptr<HistoryRecorder> recorder;
      if (options.history) {
        recorder = std::make_unique<HistoryRecorder>(*options.history, modelPath);
        pm.addObserver(recorder.get());
      }
      const RunSummary s = pm.run(*loaded.model, v.options);
      if (recorder) r.runId = recorder->runId();
      r.binding = loaded.model->binding;
      std::optional<Timeline> timeline;
      if (s.status == RunStatus::Ok) {
        const SocProfile soc = SocProfile::load(socVersionFor(*loaded.model, v.options));
        timeline = simulateTimeline(buildTaskList(*loaded.model->graph, soc.aiCores), soc,
                                    v.options.getBool("model_sink"));
      }
      r.metrics = collectRunMetrics(*loaded.model, s, timeline ? &*timeline : nullptr, nullptr);
      r.metrics.model = modelPath;
      r.metrics.optionSet = v.label;
      if (recorder && !recorder->error().empty() && r.metrics.ok()) {
        r.metrics.status = "failed";
        r.metrics.reason = "history: " + recorder->error();
      }
      if (options.keepModels) r.compiled = std::shared_ptr<Model>(std::move(loaded.model));
    } catch (const std::exception& e) {
      r.metrics.status = "failed";
      r.metrics.reason = e.what();
    }
    out.push_back(std::move(r));
    if (options.progress) options.progress(out.size(), variants.size(), out.back());
  }
  return out;
}

int64_t sharedGearArena(const std::vector<VariantResult>& gears) {
  int64_t arena = 0;
  for (const VariantResult& g : gears)
    if (g.metrics.ok()) arena = std::max(arena, g.metrics.compile.arenaBytes);
  return arena;
}

SweepChart sweepChart(const std::string& model, const std::string& symbol, const std::vector<VariantResult>& results) {
  SweepChart c;
  c.model = model;
  c.symbol = symbol;
  for (const VariantResult& r : results) {
    SweepPoint p;
    p.value = r.variant.values.empty() ? 0 : r.variant.values.front();
    p.binding = r.binding.shortText();
    p.ok = r.metrics.ok() && r.metrics.compile.built && r.metrics.simulated;
    p.error = r.metrics.ok() ? (p.ok ? "" : "the compile stopped before the memory plan") : r.metrics.reason;
    p.arenaBytes = r.metrics.compile.arenaBytes;
    p.lowerBoundBytes = r.metrics.compile.lowerBoundBytes;
    p.noReuseBytes = r.metrics.compile.noReuseBytes;
    p.ioBytes = r.metrics.compile.ioBytes;
    p.weightBytes = r.metrics.compile.weightBytes;
    p.nodes = r.metrics.nodesAfter;
    p.unsizedTensors = r.metrics.compile.unsizedTensors;
    p.latencyUs = r.metrics.latencyUs;
    c.points.push_back(std::move(p));
  }
  return c;
}

}  // namespace kiln
