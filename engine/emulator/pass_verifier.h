#pragma once
// "Which pass changed the numbers": a PassObserver that runs the graph after every pass that changed it on the same
// inputs and compares its outputs with the original graph's (run before the first pass). Before the memory plan
// exists the graph runs in reference mode; once MemoryAssignment has placed tensors, in the arena — so a plan that
// overlaps live tensors shows up as an error at that pass. A pass that left the graph unchanged inherits the error
// of the one before it.
//
// Tolerance: an output element is within when |got - want| <= rtol·|want| + rtol·max|want| (relative to each value
// and to the output's scale, so values near zero in a large output do not count as failures).
#include <functional>
#include <string>
#include <vector>

#include "emulator/reference_executor.h"
#include "history/history_emulation.h"
#include "passes/pass_manager.h"

namespace kiln {

// The tolerance `kiln verify` and the workbench use unless told: 1e-4 for fp32 compiles; 2e-2 when the compile
// computes in fp16 (every op rounds: a 1e-4 tolerance would flag the precision pass itself on every model).
double defaultVerifyTolerance(const Options& options);

struct PassAccuracy {
  PassAccuracyRow row;  // seq, status, errors, detail
  std::string pass;     // the pass name ("import" for seq 0)
};

class PassVerifier final : public PassObserver {
 public:
  // `inputs` are for the original graph's inputs (passes may rename nothing: inputs are matched by name).
  // `sink` (optional) receives every row as soon as it is computed (the history writer).
  PassVerifier(std::vector<Tensor> inputs, double rtol, std::function<void(const PassAccuracyRow&)> sink = {});

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
  double rtol_;
  std::function<void(const PassAccuracyRow&)> sink_;
  std::vector<PassAccuracy> results_;
};

}  // namespace kiln
