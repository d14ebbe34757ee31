#pragma once
// A run measured on an NPU, as the Ascend profiler writes it: msprof's `mindstudio_profiler_output` folder (or the
// PROF_* folder above it) and torch_npu's `ASCEND_PROFILER_OUTPUT`. The tasks come from `op_summary*.csv` (one row
// per device task), falling back to `task_time*.csv` when there is no op_summary; `static_op_mem.csv` gives the
// static memory of a graph's ops. Columns are found by name in any of the releases' spellings; a row that cannot be
// read (no duration, an unknown stream) is skipped and counted, never guessed. Times are kept relative to the
// profile's first task, at nanosecond resolution (msprof's absolute microsecond stamps exceed a double's precision
// below the microsecond).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/msprof/csv_table.h"

namespace kiln::msprof {

struct MeasuredTask {
  std::string name;      // Op Name: "aclnnAddmm_MatMulCommon_MatMulV2", a graph node's name, a kernel symbol
  std::string opType;    // OP Type: "MatMulV2"; the kernel name from task_time when that is all there is
  std::string taskType;  // AI_CORE, AI_VECTOR_CORE, AI_CPU, MIX_AIC, HCCL, ...
  int64_t stream = 0;
  std::optional<int64_t> taskId;
  int64_t startNs = 0;   // from the profile's first task
  double durationUs = 0;
  std::optional<double> waitUs;      // since the previous task on the device ended (Task Wait Time)
  std::optional<int64_t> blockDim;   // cores it ran on
  std::string inputShapes, inputTypes, inputFormats, outputShapes, outputTypes, outputFormats;  // "32,1024;1024"
  // The profiler's pipeline breakdown, when it sampled it (aicore_time and its mac/mte2/scalar parts; the vector
  // core's aiv_time and vec part).
  std::optional<double> aicoreUs, macUs, mte2Us, scalarUs, aivUs, vecUs;
  std::optional<int64_t> step;  // torch_npu's Step Id
  size_t line = 0;              // where it was read
};

// One row of static_op_mem.csv: a graph op's static allocation over a range of the graph's node indices.
struct StaticOpMemory {
  std::string opName, graph;
  int64_t bytes = 0;
  int64_t nodeStart = 0, nodeEnd = -1;  // -1: to the end of the graph (msprof writes 4294967295)
};

struct MeasuredProfile {
  std::string source;                 // the folder or file given
  std::string tasksFile;              // the file the tasks came from
  std::vector<MeasuredTask> tasks;    // in start order
  std::vector<StaticOpMemory> staticMemory;
  std::optional<int64_t> staticMemoryTotalBytes;  // the TOTAL row
  int64_t firstStartUs = 0;           // the absolute start of the first task (µs, the profiler's clock)
  size_t skippedRows = 0;
  std::vector<std::string> notes;     // what was skipped and why, which files were read
};

// Reads a profile folder (searched up to 3 levels down for the profiler's files) or one op_summary / task_time CSV.
// LoadError when nothing in it is a profile, or a file's header lacks the columns a task needs.
MeasuredProfile readMeasuredProfile(const std::string& path, const CsvLimits& limits = {});

// Whether `path` looks like a profile: a folder holding an op_summary/task_time CSV or msprof's trace, such a CSV (by
// its header), or the trace (by its content).
bool isMeasuredProfile(const std::string& path);

// Whether the start of a file is msprof's Chrome trace (msprof_*.json): trace events naming the Ascend Hardware
// process. Read when a folder holds no task CSV, or when such a file is given by itself.
bool looksLikeMsprofTrace(std::string_view head);

// "1780295077844859.030" -> 1780295077844859030 ns; nullopt for anything else.
std::optional<int64_t> parseMicrosecondsToNs(std::string_view text);

}  // namespace kiln::msprof
