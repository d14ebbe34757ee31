#pragma once
// The device task list of a scheduled graph, per stream, as GE generates it at build time and the runtime executes
// it: a KERNEL per AI Core op (with its block_dim, how many cores it spreads over), a KERNEL_EX per AI CPU op, an
// EVENT_WAIT before a node for each event it waits on and an EVENT_RECORD after it for each it records, a
// MEMCPY_ASYNC where an aliasing op (Reshape...) must still produce a separate graph output, and END_GRAPH closing
// the main stream (stream 0) after it has waited for the tail of every other stream. Host ops and aliasing ops produce no device task; Const data lives in weight memory.
//
// The list is a function of the annotated graph (engine/unit, stream, event.record/event.wait annotations and the
// node order), so the pass that builds it, the .om writer and the emulator all derive the same list.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

class Graph;
class Node;

// The numbers are GE's TaskDef types.
enum class TaskType : int { Kernel = 0, EventRecord = 1, EventWait = 2, KernelEx = 5, MemcpyAsync = 13, EndGraph = 19 };
// GE's name of a TaskDef type code ("KERNEL", "EVENT_RECORD", ... "MODEL_EXIT"); "TYPE_<n>" for codes without one.
// The one table for every GE task type, ours and those read from .om files.
std::string taskTypeName(uint32_t type);
inline std::string taskTypeName(TaskType t) { return taskTypeName(static_cast<uint32_t>(t)); }

struct Task {
  int id = 0;  // position in the list
  TaskType type = TaskType::Kernel;
  int stream = 0;
  const Node* node = nullptr;  // null for END_GRAPH and the join events before it
  int event = -1;              // EVENT_RECORD / EVENT_WAIT
  int64_t blockDim = 0;        // KERNEL
};

// AI Core count of a SoC (soc_version option values); 32 for an unknown name.
int aiCoreCount(std::string_view socVersion);

// How many cores an AI Core kernel spreads over: one block per 16×16 output tile on the Cube, per 8 KiB of output
// on the Vector unit, at most `cores`. (Real tiling is per op; this keeps big ops wide and tiny ones on one core.)
int64_t blockDimOf(const Node& n, int cores);

std::vector<Task> buildTaskList(const Graph& g, int aiCores);

}  // namespace kiln
