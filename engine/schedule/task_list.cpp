#include "schedule/task_list.h"

#include <algorithm>

#include "ir/graph.h"
#include "ir/aliasing_ops.h"
#include "schedule/sync_events.h"
#include "util/flat_ptr_map.h"

namespace kiln {

std::string taskTypeName(uint32_t type) {
  switch (type) {
    case 0: return "KERNEL";
    case 1: return "EVENT_RECORD";
    case 2: return "EVENT_WAIT";
    case 3: return "FUSION_START";
    case 4: return "FUSION_END";
    case 5: return "KERNEL_EX";
    case 6: return "HCCL";
    case 7: return "STREAM_SWITCH";
    case 8: return "STREAM_ACTIVE";
    case 9: return "LABEL_SET";
    case 10: return "LABEL_SWITCH";
    case 11: return "LABEL_GOTO";
    case 12: return "PROFILER_TRACE";
    case 13: return "MEMCPY_ASYNC";
    case 14: return "NOTIFY_RECORD";
    case 15: return "NOTIFY_WAIT";
    case 18: return "EVENT_RESET";
    case 19: return "END_GRAPH";
    case 22: return "MEMCPY_ADDR_ASYNC";
    case 25: return "MODEL_EXIT";
    default: return "TYPE_" + std::to_string(type);
  }
}

int aiCoreCount(std::string_view socVersion) {
  if (socVersion == "Ascend910B1") return 24;
  if (socVersion == "Ascend310P3") return 8;
  if (socVersion == "Ascend310") return 2;
  return 32;  // Ascend910A
}

int64_t blockDimOf(const Node& n, int cores) {
  const Value* out = n.numOutputs() > 0 ? n.output(0) : nullptr;
  const auto numel = out ? out->type().shape.numel() : std::nullopt;
  if (!numel || *numel <= 0) return 1;
  const int64_t bytes = *numel * std::max(1, dtypeSize(out->type().dtype));
  const int64_t blocks = n.annotation("unit") == "cube" ? (*numel + 255) / 256 : (bytes + 8191) / 8192;
  return std::clamp<int64_t>(blocks, 1, cores);
}

std::vector<Task> buildTaskList(const Graph& g, int aiCores) {
  std::vector<Node*> order(g.nodes().begin(), g.nodes().end());
  const auto streamOf = streamsFromAnnotations(order);
  FlatPtrMap<const Node*, std::vector<int>> waits, records;
  for (const SyncEvent& e : eventsFromAnnotations(order)) {
    waits[e.consumer].push_back(e.id);
    records[e.producer].push_back(e.id);
  }
  std::vector<Task> tasks;
  auto emit = [&](TaskType type, int stream, const Node* n, int event = -1, int64_t blockDim = 0) {
    tasks.push_back(Task{int(tasks.size()), type, stream, n, event, blockDim});
  };
  for (const Node* n : order) {
    auto s = streamOf.find(n);
    const int stream = s == streamOf.end() ? 0 : s->second;
    if (auto w = waits.find(n); w != waits.end())
      for (int id : w->second) emit(TaskType::EventWait, stream, n, id);
    const std::string engine = n->annotation("engine");
    if (aliasesInput(*n)) {
      // Nothing to compute, but a graph output is the caller's own buffer: the bytes must be copied there.
      if (n->output(0)->isGraphOutput()) emit(TaskType::MemcpyAsync, stream, n);
    } else if (n->opType() == "Constant" && n->domain().empty()) {
      // weight memory, loaded with the model
    } else if (engine == "aicore") {
      emit(TaskType::Kernel, stream, n, -1, blockDimOf(*n, aiCores));
    } else if (engine == "aicpu") {
      emit(TaskType::KernelEx, stream, n);
    }
    if (auto r = records.find(n); r != records.end())
      for (int id : r->second) emit(TaskType::EventRecord, stream, n, id);
  }
  // The main stream ends with END_GRAPH; the runtime reports the model done when it is reached, so first the main
  // stream waits for the last task of every other stream (a join event each, numbered after the graph's events).
  int nextEvent = 0;
  for (const auto& [node, ids] : records) nextEvent = std::max(nextEvent, *std::max_element(ids.begin(), ids.end()) + 1);
  std::vector<int> tails;
  for (const Task& t : tasks)
    if (t.stream != 0 && std::find(tails.begin(), tails.end(), t.stream) == tails.end()) tails.push_back(t.stream);
  std::sort(tails.begin(), tails.end());
  for (int stream : tails) {
    emit(TaskType::EventRecord, stream, nullptr, nextEvent);
    emit(TaskType::EventWait, 0, nullptr, nextEvent++);
  }
  emit(TaskType::EndGraph, 0, nullptr);
  return tasks;
}

}  // namespace kiln
