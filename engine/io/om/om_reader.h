#pragma once
// Ascend offline model (.om) import: the container (om_container.h), MODEL_DEF (ge.proto.ModelDef), TASK_INFO
// (domi.ModelTaskDef), WEIGHTS_DATA, TBE_KERNELS and MODEL_INOUT_INFO become a kiln::Model plus the facts of the
// file that have no place in the IR (OmModelInfo). Protobuf stays inside the .cpp.
//
// The graph is built by ge_model_builder.h (as for GE's dumps and om JSON); the .om adds what only it has: the
// weights (Const values are slices of WEIGHTS_DATA, never copied), the task list (om.task, om.block_dim,
// om.kernel_name annotations; om_plan.h turns tasks and offsets into Kiln's plan annotations), the kernel binaries
// and MODEL_INOUT_INFO.
// With several models in the file (model_num > 1) one is read — model 0 (the root) unless asked for another
// ("FILE.om#N", io/model_path.h) —, with a warning naming the others; every model's partitions are listed in
// OmModelInfo::container, and the metadata says om.model_index of om.model_count.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "util/load_error.h"
#include "io/om/ge_model_builder.h"
#include "io/om/om_container.h"
#include "ir/model.h"
#include "ir/tensor.h"

namespace kiln::om {

struct OmTask {
  size_t index = 0;  // position in the task list
  uint32_t id = 0, type = 0, streamId = 0, eventId = 0, labelId = 0;
  int64_t opIndex = -1;  // OpDef.id of the op a kernel runs (KernelContext.op_index); -1 when none
  std::string opName;    // that op's name when it is in the graph
  std::string kernelName, stubFunc;
  uint32_t blockDim = 0, kernelType = 0;
};
// Task type names: kiln::taskTypeName (schedule/task_list.h).

struct OmKernelBinary {
  std::string name;   // the op the kernel was built for
  uint64_t size = 0;  // bytes of the binary
};

struct OmModelInfo {
  OmContainer container;                 // header, every model's partitions, container warnings
  std::vector<OmTask> tasks;             // TASK_INFO of the model read
  std::vector<OmKernelBinary> kernels;   // TBE_KERNELS of the model read
  std::optional<OmInOutInfo> inOut;      // MODEL_INOUT_INFO when present
  uint64_t memorySize = 0, weightSize = 0, weightsBytes = 0;  // weightsBytes: size of WEIGHTS_DATA
  uint32_t streamNum = 0, eventNum = 0;
  std::string socVersion;
};

struct OmImport {
  std::unique_ptr<Model> model;
  std::vector<std::string> warnings;
  OmModelInfo info;
};

// Memory-maps the file (weights stay slices of the mapping). Throws LoadError naming the file and the problem.
OmImport readOmFile(const std::string& path, size_t modelIndex = 0, const std::string& displayName = {});
// How many models the file holds (its container only); 1 when it cannot tell (the load then says why).
size_t omModelCount(const std::string& path);
// From bytes already in memory (tests, writers). Throws LoadError.
OmImport readOmBytes(std::shared_ptr<const Storage> bytes, const std::string& displayName, size_t modelIndex = 0);

}  // namespace kiln::om
