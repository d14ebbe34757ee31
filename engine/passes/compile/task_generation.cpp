// TaskGeneration: GE's "generate tasks" build step. Builds the per-stream task list (schedule/task_list.h) and
// writes each node's tasks into its "task" annotation ("KERNEL block_dim 32", "EVENT_WAIT 4, KERNEL_EX", ...), so
// a user sees in the inspector what the device will run for that node. `model_sink` (default on, as for ATC's
// offline models) says the device runs the whole list by itself; off, the host launches every task, and the
// host_launches counter says how many round trips that costs per inference.
// Counters: tasks, one per task type (kernel, kernel_ex, event_record, event_wait, memcpy_async, end_graph),
// streams_with_tasks, host_launches.
#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "ir/graph.h"
#include "ir/model.h"
#include "passes/compile/compile_passes.h"
#include "options/options.h"
#include "schedule/task_list.h"

namespace kiln {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return out;
}

class TaskGeneration final : public Pass {
 public:
  std::string name() const override { return "TaskGeneration"; }

  PassResult run(PassContext& ctx) override {
    Graph& g = *ctx.model.graph;
    const std::vector<Task> tasks = buildTaskList(g, aiCoreCount(ctx.options.getString("soc_version")));
    std::map<const Node*, std::string> text;
    PassResult r;
    std::set<int> streams;
    for (const Task& t : tasks) {
      r.add(lower(taskTypeName(t.type)));
      streams.insert(t.stream);
      if (!t.node) continue;
      std::string& s = text[t.node];
      s += (s.empty() ? "" : ", ") + std::string(taskTypeName(t.type));
      if (t.event >= 0) s += " " + std::to_string(t.event);
      if (t.type == TaskType::Kernel) s += " block_dim " + std::to_string(t.blockDim);
    }
    for (Node* n : g.nodes()) {
      auto it = text.find(n);
      const std::string want = it == text.end() ? "" : it->second;
      if (n->annotation("task") == want) continue;
      if (want.empty()) n->eraseAnnotation("task");
      else n->setAnnotation("task", want);
      r.changed = true;
    }
    r.counters["tasks"] = int64_t(tasks.size());
    r.counters["streams_with_tasks"] = int64_t(streams.size());
    r.counters["host_launches"] = ctx.options.getBool("model_sink") ? 0 : int64_t(tasks.size());
    return r;
  }
};

}  // namespace

std::unique_ptr<Pass> makeTaskGenerationPass() { return std::make_unique<TaskGeneration>(); }

}  // namespace kiln
