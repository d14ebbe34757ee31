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
#include <unordered_map>
#include <unordered_set>
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
  double ms = 0;        // emulating the graph after the pass (0 when it did not change it)
  // Nodes run again, and nodes whose outputs were taken from the previous run because neither they nor what they
  // read changed (reference mode only: once tensors are placed in the arena, every node runs there).
  int64_t nodesRun = 0, nodesReused = 0;
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
  PassAccuracyRow verify(const Model& model, int seq, PassAccuracy& stats);
  void add(PassAccuracy a);
  // The reference-mode options of a run over `model` that reuses the previous run's outputs where it can and keeps
  // this run's for the next one.
  ExecutionOptions reusingOptions(const Model& model, PassAccuracy& stats);
  // After a reference-mode run: its outputs become the ones the next run may reuse.
  void keepRun(const Model& model);

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
  // The last reference-mode run's outputs by value id, and the model revision it ran at. Dropped once they would
  // hold more than kMaxCacheBytes, or after a run in the arena.
  std::unordered_map<uint64_t, Tensor> cache_, next_;
  uint64_t cacheRevision_ = 0;
  int64_t nextBytes_ = 0;
  bool cacheUsable_ = false;
  std::unordered_set<uint64_t> reusedValues_;
  std::vector<Tensor> reused_;  // the outputs handed to the executor for the node it asks about
  std::string arenaSignature_;  // the definition revision and every mem.out of the last run in the arena
  std::vector<Tensor> arenaOutputs_;
};

}  // namespace kiln
