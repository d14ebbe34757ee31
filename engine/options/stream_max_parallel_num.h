#pragma once
// The value of option stream_max_parallel_num, parsed: the option schema validates with it, StreamAssignment
// (schedule/stream_assigner) reads its limits from it.
#include <map>
#include <string>

namespace kiln {

// "AIcoreEngine:8,DNN_VM_AICPU:1" (ATC's --stream_max_parallel_num; also CubeEngine, VectorEngine) -> limits by
// engine class. Throws std::invalid_argument naming the bad item.
std::map<std::string, int> parseStreamMaxParallelNum(const std::string& text);

}  // namespace kiln
