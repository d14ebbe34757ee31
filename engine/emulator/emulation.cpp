#include "emulator/emulation.h"

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <cmath>
#include <stdexcept>

#include "emulator/constant_nodes.h"
#include "emulator/model_inputs.h"
#include "emulator/precision_gate.h"
#include "emulator/function_expander.h"
#include "kernels/openblas.h"
#include "util/resident_memory.h"

namespace kiln {

namespace {

double msSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// Reads one byte of every page of the graph's weights (its bodies' too). An ONNX file's weights stay in the mapped
// file until read, so the first run paid a page fault for every 4 KiB of them inside its clock (a fifth of
// MobileNetV2's first run); ONNX Runtime reads them when it creates its session.
void faultInWeights(const Graph& g) {
  constexpr size_t kPage = 4096;
  volatile uint8_t sink = 0;
  g.forEachGraph([&](const Graph& each) {
    for (const Value* v : each.values())
      if (const Tensor* t = v->constant(); t && t->data())
        for (size_t at = 0; at < t->byteSize(); at += kPage) sink = sink + t->data()[at];
  });
}

}  // namespace

double EmulationReport::maxAbsError() const {
  double worst = 0;
  for (const OutputError& e : errors) worst = std::max(worst, e.diff.comparable ? e.diff.maxAbs : HUGE_VAL);
  return worst;
}
double EmulationReport::maxRelError() const {
  double worst = 0;
  for (const OutputError& e : errors) worst = std::max(worst, e.diff.comparable ? e.diff.maxRel : HUGE_VAL);
  return worst;
}
double EmulationReport::minCosine() const {
  double worst = 1;
  for (const OutputError& e : errors) worst = std::min(worst, e.diff.cosine);
  return worst;
}

ReferenceRun runReference(const Model& original, const std::vector<Tensor>& inputs, ExecutionOptions options) {
  const Graph& ref = *original.graph;
  if (inputs.size() != ref.inputs().size())
    throw std::runtime_error("expected " + std::to_string(ref.inputs().size()) + " inputs, got " +
                             std::to_string(inputs.size()));
  ExecutionOptions refOptions = options;
  refOptions.opset = original.opsetFor("");
  refOptions.functions = makeFunctionExpander(original);
  kernels::loadBlas();  // before the clock starts
  ReferenceRun run;
  // Before the clock starts, as ONNX Runtime does when it creates a session: the weights read in (resident before the
  // run's memory is measured: they are the model's, in the budget apart), what depends on constants only computed
  // once, and the run's plan (order, last reads, conv chains); the constants' values count in the run's memory.
  const auto prepareStart = std::chrono::steady_clock::now();
  faultInWeights(ref);
  const ResidentPeak memory;
  if (!refOptions.constants) refOptions.constants = computeConstantNodes(ref, ReferenceExecutor(refOptions));
  if (options.watchFp16Range) refOptions.afterNode = [&run, chained = options.afterNode](const Node& n, const std::vector<Tensor>& out) {
    if (chained) chained(n, out);
    if (!run.beyondFp16.empty()) return;
    for (size_t i = 0; i < out.size(); ++i) {
      if (!out[i].valid() || out[i].dtype() != DType::Float || reinterpret_cast<uintptr_t>(out[i].data()) % 4) continue;
      const float* f = reinterpret_cast<const float*>(out[i].data());
      float peak = 0;
      for (int64_t k = 0; k < out[i].numel(); ++k) {
        const float a = std::fabs(f[k]);
        if (a > peak && a <= FLT_MAX) peak = a;  // (infinities and NaN are not values beyond the range)
      }
      if (peak > 65504.0f) {
        const Value* o = i < n.numOutputs() ? n.output(i) : nullptr;
        char value[32];
        std::snprintf(value, sizeof value, "%.4g", static_cast<double>(peak));
        run.beyondFp16 = (n.name().empty() ? "an unnamed " + n.opType() + " node" : "node '" + n.name() + "' (" + n.opType() + ")") +
                         (o ? ", output '" + o->name() + "'," : std::string()) + " reaches " + value +
                         " in fp32, beyond fp16's largest finite value 65504";
        return;
      }
    }
  };
  if (!refOptions.plan) refOptions.plan = planGraphRun(ref, refOptions);
  run.prepareMs = msSince(prepareStart);
  const auto start = std::chrono::steady_clock::now();
  run.outputs = ReferenceExecutor(refOptions).run(ref, inputs);
  run.ms = run.firstMs = msSince(start);
  run.peakBytes = memory.addedBytes();
  for (int i = 1; i < options.timedRuns; ++i) {  // for the time only: the results are the first run's
    const auto again = std::chrono::steady_clock::now();
    ReferenceExecutor(refOptions).run(ref, inputs);
    run.ms = std::min(run.ms, msSince(again));
  }
  return run;
}

EmulationReport emulateCompiled(const Model& original, const Model& compiled, const std::vector<Tensor>& inputs,
                                const ReferenceRun& reference, ExecutionOptions options) {
  EmulationReport report;
  const Graph& ref = *original.graph;
  const Graph& out = *compiled.graph;
  report.reference = reference.outputs;
  report.referenceMs = reference.ms;
  report.referenceFirstMs = reference.firstMs;
  report.referencePrepareMs = reference.prepareMs;
  report.referencePeakBytes = reference.peakBytes;
  report.beyondFp16 = reference.beyondFp16;

  // The compiler may drop inputs nobody reads or turn some into constants; the rest keep their names.
  const std::vector<Tensor> compiledInputs = inputsByName(ref, inputs, out);
  ExecutionOptions compiledOptions = options;
  compiledOptions.opset = compiled.opsetFor("");
  compiledOptions.functions = makeFunctionExpander(compiled);
  const auto start = std::chrono::steady_clock::now();
  const ResidentPeak memory;
  try {
    report.arena = runInArena(out, compiledInputs, compiledOptions);
  } catch (const NotEmulatable& e) {
    report.compiledError = e.what();
    report.compiledNotEmulatable = true;
    return report;
  } catch (const std::exception& e) {
    report.compiledError = e.what();
    return report;
  }
  report.compiledMs = report.compiledFirstMs = msSince(start) - report.arena.prepareMs;
  report.compiledPeakBytes = memory.addedBytes();
  for (int i = 1; i < options.timedRuns; ++i) {  // for the time only (the same graph, inputs and plan)
    const auto again = std::chrono::steady_clock::now();
    const ArenaRunResult run = runInArena(out, compiledInputs, compiledOptions);
    report.compiledMs = std::min(report.compiledMs, msSince(again) - run.prepareMs);
  }
  report.compiled = report.arena.outputs;
  if (report.compiled.size() != report.reference.size())
    throw std::runtime_error("the compiled model has " + std::to_string(report.compiled.size()) +
                             " outputs, the original " + std::to_string(report.reference.size()));
  for (size_t i = 0; i < report.reference.size(); ++i)
    report.errors.push_back({ref.outputs()[i]->name(), compareTensors(report.compiled[i], report.reference[i])});
  return report;
}

EmulationReport emulateModel(const Model& original, const Model& compiled, const std::vector<Tensor>& inputs,
                             ExecutionOptions options) {
  if (computePrecision(*compiled.graph) == ComputePrecision::Fp16) options.watchFp16Range = true;
  return emulateCompiled(original, compiled, inputs, runReference(original, inputs, options), options);
}

}  // namespace kiln
