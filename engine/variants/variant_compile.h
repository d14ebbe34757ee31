#pragma once
// Compiles each shape variant of a model (variants/shape_variants.h) the way `kiln compile` compiles one: load,
// the standard passes, the task list simulated on the options' SoC. Every variant is its own run in the history
// when one is given (its options carry its extents, its shape binding is recorded). Gears then report the model's
// arena as GE does: one region every gear is laid out from, as big as the largest gear's plan (GE's dynamic-batch
// memory assigner lays each gear's reusable blocks from one base offset); a sweep becomes a SweepChart.
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ir/model.h"
#include "report/run_metrics.h"
#include "report/sweep_chart.h"
#include "variants/shape_variants.h"

namespace kiln {

class HistoryDb;

struct VariantResult {
  ShapeVariant variant;
  ShapeBinding binding;
  RunMetrics metrics;  // status/reason, nodes, arena, lower bound, no reuse, weights, latency
  int64_t runId = 0;   // in the history, when recorded
  std::shared_ptr<Model> compiled;  // when VariantCompileOptions::keepModels
};

struct VariantCompileOptions {
  HistoryDb* history = nullptr;
  bool keepModels = false;                   // the .om writer needs every gear's graph
  const std::atomic<bool>* cancel = nullptr;  // between variants and passes
  std::function<void(size_t done, size_t total, const VariantResult&)> progress;
};

// Never throws for a variant: a load or pass failure is that variant's status and reason.
std::vector<VariantResult> compileVariants(const std::string& modelPath, const std::vector<ShapeVariant>& variants,
                                           const VariantCompileOptions& options = {});

// GE's shared gear memory: the largest gear's arena (0 when none compiled).
int64_t sharedGearArena(const std::vector<VariantResult>& gears);
// The sweep's points (value = the variant's swept value).
SweepChart sweepChart(const std::string& model, const std::string& symbol, const std::vector<VariantResult>& results);

}  // namespace kiln
