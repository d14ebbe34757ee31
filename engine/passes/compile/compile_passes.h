#pragma once
// Stage 3 (compile / build) passes, one per file, in pipeline order: memory assignment (lifetimes and a reuse plan
// for the arena), the events that order the plan's reuses across streams, and task generation (the per-stream device task list). Their results are node annotations
// ("mem.in", "mem.out", "task") and pass counters, so the history records them and the inspector shows them.
#include <memory>

#include "passes/pass.h"

namespace kiln {

std::unique_ptr<Pass> makeMemoryAssignmentPass();  // memory/lifetimes.h + memory/memory_plan.h
std::unique_ptr<Pass> makeMemoryReuseEventsPass();  // memory/reuse_handoffs.h
std::unique_ptr<Pass> makeTaskGenerationPass();    // schedule/task_list.h

}  // namespace kiln
