#pragma once
// What one device task costs on a SoC profile. A roofline per task: the time is the fixed task cost plus the larger
// of compute time (Cube cycles from 16-aligned M/N/K, Vector cycles from elements over lanes) and memory time (bytes
// the task moves to and from HBM over the shared bandwidth). Shapes are the physical ones the compiler recorded, so
// NC1HWC0/FRACTAL padding costs real cycles and bytes; a fused op moves only its external inputs and outputs
// unless its intermediates overflow the Unified Buffer of the cores it runs on. An op type the profile was calibrated
// on (`kiln calibrate`) costs its fitted setup plus its scaled work instead.
#include <cstdint>
#include <string_view>

#include "emulator/timing/soc_profile.h"
#include "schedule/task_list.h"

namespace kiln {

// Where a task runs. AI Core tasks use the Cube or Vector unit of one or more cores; AI CPU, DMA and the stream
// itself (events, END_GRAPH) are separate resources.
enum class SimUnit : uint8_t { Cube, Vector, AiCpu, Dma, Stream };
std::string_view simUnitName(SimUnit u);  // "cube", "vector", "aicpu", "dma", "stream"

struct TaskCost {
  SimUnit unit = SimUnit::Stream;
  int cores = 0;            // cores (or engines) held while it runs
  double flops = 0;         // arithmetic operations (a multiply-add counts 2)
  double bytes = 0;         // HBM traffic
  double computeUs = 0;
  double memoryUs = 0;
  double fixedUs = 0;       // task overhead
  double durationUs = 0;    // fixed + max(compute, memory)
  bool memoryBound = false;
  bool calibrated = false;  // the profile's measured correction for this op type applied (SocProfile::opCalibration)
  // Its node's shapes or element types were not inferred: only the fixed cost is counted, and reports say the work
  // is unknown instead of showing a small, wrong number. The unit stays the one placement chose.
  bool costUnknown = false;
};

// Whether a node's cost can be computed: every output, and every input that is not an omitted optional one, has a
// known element type and static extents.
bool costKnowable(const Node& n);

TaskCost taskCost(const Task& t, const SocProfile& p);

// Cube work of a node as a batch of (M, N, K) products; zero when it is not a matrix op or shapes are unknown.
struct CubeShape {
  double batch = 0, m = 0, n = 0, k = 0;
};
CubeShape cubeShapeOf(const Node& n);

}  // namespace kiln
