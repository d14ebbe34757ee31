#pragma once
// One emulated run of a model, both ways: the original graph in reference mode and the compiled graph in the arena
// (compiled mode), on the same inputs, with the error of every compiled output against the reference.
#include <optional>
#include <string>
#include <vector>

#include "emulator/arena_executor.h"
#include "emulator/tensor_compare.h"
#include "ir/model.h"

namespace kiln {

struct OutputError {
  std::string name;
  TensorDifference diff;
};

struct EmulationReport {
  std::vector<Tensor> reference, compiled;  // one per graph output
  std::vector<OutputError> errors;          // compiled against reference, per output
  // compiledMs: the compiled run's nodes; its memory's allocation and its weights' re-layout before them are
  // arena.prepareMs, apart.
  // referenceMs likewise leaves out referencePrepareMs (ReferenceRun::prepareMs).
  double referenceMs = 0, compiledMs = 0, referencePrepareMs = 0;
  // With ExecutionOptions::timedRuns > 1: referenceMs and compiledMs are the fastest of those runs, these the first.
  double referenceFirstMs = 0, compiledFirstMs = 0;
  ArenaRunResult arena;
  // Resident memory the compiled run (its weights' re-layout included) added at its peak; nullopt: not measured.
  std::optional<int64_t> compiledPeakBytes, referencePeakBytes;
  // Why the compiled mode could not run (empty when it did): the reference results stand on their own.
  std::string compiledError;
  // The compiled graph holds an op its mode cannot run (control flow, ...): its numbers are missing, not wrong.
  bool compiledNotEmulatable = false;
  // ReferenceRun::beyondFp16 of the reference run.
  std::string beyondFp16;
  // Largest error over the outputs (max abs), and the smallest cosine.
  double maxAbsError() const;
  double maxRelError() const;
  double minCosine() const;
};

// `inputs` are given for the original graph's inputs; the compiled graph's inputs are matched to them by name.
// Throws NotEmulatable or std::runtime_error when the reference mode fails; a compiled-mode failure is reported in
// compiledError instead (errors then stay empty).
EmulationReport emulateModel(const Model& original, const Model& compiled, const std::vector<Tensor>& inputs,
                             ExecutionOptions options = {});

// The two halves of emulateModel, for callers that compare several compiles of one model with one reference run
// (`kiln batch` runs the reference once per model, not once per option set).
struct ReferenceRun {
  std::vector<Tensor> outputs;
  double ms = 0;
  double firstMs = 0;  // the first of ExecutionOptions::timedRuns runs (ms: the fastest)
  // Before the clock starts, not in `ms`: the nodes that depend on constants only computed
  // (emulator/constant_nodes.h).
  double prepareMs = 0;
  // Resident memory the run added at its peak (util/resident_memory.h); nullopt where it cannot be measured.
  std::optional<int64_t> peakBytes;
  // The first node (in execution order) whose fp32 output holds a finite value beyond fp16's largest (65504), with
  // that value: where a compile computing in fp16 must overflow. Empty when none does.
  std::string beyondFp16;
};
// Throws like emulateModel.
ReferenceRun runReference(const Model& original, const std::vector<Tensor>& inputs, ExecutionOptions options = {});
EmulationReport emulateCompiled(const Model& original, const Model& compiled, const std::vector<Tensor>& inputs,
                                const ReferenceRun& reference, ExecutionOptions options = {});

}  // namespace kiln
