#pragma once
// The emulator's compiled mode: a Stage-3-compiled graph run the way the device runs it. Every tensor the memory
// plan placed lives at its planned offset inside ONE arena (the "mem.out" annotations MemoryAssignment wrote), so
// each kernel reads its inputs from the arena and its outputs overwrite whatever the plan put there before. A plan
// that lets two live tensors overlap therefore gives wrong numbers — which is what comparing against the reference
// mode is for.
//
// Outside the arena, as on the device: graph inputs and outputs (the caller's buffers), weights (their own
// memory), and tensors the plan could not size (symbolic shapes), which are kept aside and counted.
// Nodes run in the graph's order (the schedule TopologicalSort chose, consistent with every stream's events).
#include <cstdint>
#include <vector>

#include "emulator/reference_executor.h"

namespace kiln {

struct ArenaRunResult {
  std::vector<Tensor> outputs;  // one per graph output
  int64_t arenaBytes = 0;       // extent of the placed tensors
  int64_t placedTensors = 0;    // tensors written into the arena
  int64_t asideTensors = 0;     // tensors kept outside it (unsized)
  int64_t kernelsRun = 0;
  // Time spent before the first node: reading the memory plan (where each value lives), allocating the arena and
  // the convolutions' workspace, and re-laying out blocked weights (FRACTAL_Z, FRACTAL_NZ...) into the logical form
  // their kernels read; as the device's runtime allocates a model's memory when it loads it, and ONNX Runtime
  // prepacks weights when it creates a session.
  double prepareMs = 0;
};

// Throws std::runtime_error when the graph carries no memory plan (not compiled through Stage 3), a kernel's output
// does not fit the block planned for it, or the arena would exceed ExecutionOptions::maxArenaBytes; NotEmulatable
// for an op without a kernel.
ArenaRunResult runInArena(const Graph& g, const std::vector<Tensor>& inputs, const ExecutionOptions& options = {});

}  // namespace kiln
