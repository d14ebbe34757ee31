#pragma once
// An .om is a compiled model: this turns what its OpDefs and TASK_INFO record into the annotations Kiln's own
// compile passes write, so the memory view, the Gantt chart, lifetimes and the task list read ATC's plan exactly as
// they read Kiln's:
//   - "stream" from OpDef.stream_id;
//   - "mem.out" from OpDef.output_i: the feature-map offset of each output; "weight" for Const outputs, "input" for
//     Data outputs and "output" for what NetOutput takes (zero-copy: the caller's buffers, as memory/lifetimes
//     classifies them), "-" for an absent slot;
//   - "event.record" / "event.wait" from the EVENT_RECORD / EVENT_WAIT tasks: a record belongs to the last kernel
//     issued before it on its stream, a wait to the next one after it; without a task list, from GE's Send / Recv
//     ops (event_id): a Send records after the op its control edge comes from, a Recv's control successors wait;
//   - "engine" / "unit" from the task that runs each op: KERNEL on AI Core (its cube or vector unit, as the op
//     registry knows the op), KERNEL_EX on AI CPU; without a task list (a graph dump, an om JSON), from the kernel
//     library GE recorded on the op (_ge_attr_op_kernel_lib_name: AIcoreEngine, AICPU..., GE's local ops on the
//     host).
#include <vector>

#include "io/om/om_reader.h"

namespace kiln {
struct Model;
}

namespace kiln::om {

void annotateOmPlan(Model& m, const std::vector<OmTask>& tasks);

}  // namespace kiln::om
