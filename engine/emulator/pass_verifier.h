#pragma once
// "Which pass changed the numbers": a PassObserver that runs the graph after every pass that changed it on the same
// inputs and compares its outputs with the original graph's (run before the first pass). Before the memory plan
// exists the graph runs in reference mode; once MemoryAssignment has placed tensors, in the arena — so a plan that
// overlaps live tensors shows up as an error at that pass. A pass that left the graph unchanged inherits the error
// of the one before it.
//
// Each pass is judged by the precision gate (emulator/precision_gate.h) of what its graph computes in: before
// RefineRunningPrecision an fp32 graph meets the fp32 gate, after it an fp16 graph the fp16 gate; a pass whose
// outputs fall below their gate is "exceeds", and the first such pass is the one that broke the numbers.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "emulator/reference_executor.h"
#include "history/history_emulation.h"
#include "passes/pass_manager.h"

namespace kiln {

struct PassAccuracy {
  PassAccuracyRow row;  // seq, status, errors, detail
  std::string pass;     // the pass name ("import" for seq 0)
};

class PassVerifier final : public PassObserver {
 public:
  // `inputs` are for the original graph's inputs (passes may rename nothing: inputs are matched by name).
  // `rtol`: one tolerance for every pass instead of the gate's per precision (kiln verify --rtol).
  // `sink` (optional) receives every row as soon as it is computed (the history writer).
  PassVerifier(std::vector<Tensor> inputs, std::optional<double> rtol = std::nullopt,
               std::function<void(const PassAccuracyRow&)> sink = {});

  void runStarted(const Model& model, const Options& options) override;
  void afterPass(const PassRecord& record, const Model& model) override;

  const std::vector<PassAccuracy>& results() const { return results_; }
  // Index into results() of the first pass whose error exceeds the tolerance; -1 when none does.
  int firstExceeding() const;
  // The original graph could not be run (an unsupported op...): why; every row then says not_emulatable.
  const std::string& baselineError() const { return baselineError_; }

 private:
  PassAccuracyRow verify(const Model& model, int seq);
  void add(PassAccuracy a);

  std::vector<Tensor> inputs_;
  std::vector<std::pair<std::string, Tensor>> namedInputs_;  // the original inputs by name (constants included)
  std::vector<Tensor> baseline_;
  std::vector<std::string> outputNames_;
  std::string baselineError_;
  ExecutionOptions limits_;  // the run's emulator.* limits
  std::optional<double> rtol_;
  std::optional<Options> options_;
  std::function<void(const PassAccuracyRow&)> sink_;
  std::vector<PassAccuracy> results_;
};

}  // namespace kiln
