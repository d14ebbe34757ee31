#pragma once
// Ascend offline model (.om) import: the container (om_container.h), MODEL_DEF (ge.proto.ModelDef), TASK_INFO
// (domi.ModelTaskDef), WEIGHTS_DATA, TBE_KERNELS and MODEL_INOUT_INFO become a kiln::Model plus the facts of the
// file that have no place in the IR (OmModelInfo). Protobuf stays inside the .cpp.
//
// The graph holds GE's ops as GE names them (Data, Const, Conv2D, TransData, NetOutput...) in the domain "ge", so
// the ONNX registry never mistakes them for ONNX ops of the same name (they are listed as unknown/unsupported).
//   - values: output i of op X is the value "X:i" (as GE's "src:idx" references name it), typed from the op's
//     output_desc: dtype, the physical shape GE records (-1 = unknown dim, a lone -2 = unknown rank) and the layout
//     as a Format where Kiln has one (otherwise ND, the layout string kept in an annotation);
//   - a Data op reads a graph input named after the op; NetOutput gets one output per input ("NetOutput:i"), which
//     are the graph's outputs;
//   - a Const's weights (its `value` attribute) are slices of WEIGHTS_DATA at data_offset, never copied;
//   - control edges ("src:-1") are not IR edges (the IR has none): they are listed in the "om.control_inputs"
//     annotation;
//   - GraphDefs named by OpDef.subgraph_name become subgraphs held by the op's graph-list attribute "subgraphs";
//   - op attributes (sorted by name) map onto Kiln's kinds: bool -> int 0/1, data type -> its GE code, a tensor
//     descriptor -> a type; lossy on purpose (this is for display, not for writing the file back): a tensor-valued
//     attribute other than a Const's `value` keeps only its type, bytes above 4 KiB become "<N bytes>", a function
//     its name, list_list_int one "a,b,c" string per row;
//   - per-op facts (om.id, om.stream_id, om.input_offsets, om.output_offsets, om.workspace, om.workspace_bytes,
//     om.task, om.block_dim, om.kernel_name, om.output<i>.origin_format / origin_shape / layout) are annotations;
//     model facts (om.memory_size, om.weight_size, om.stream_num, om.event_num, om.soc_version...) are metadata.
// With several models in the file (model_num > 1) one is read — model 0 (the root) unless asked for another
// ("FILE.om#N", io/model_path.h) —, with a warning naming the others; every model's partitions are listed in
// OmModelInfo::container, and the metadata says om.model_index of om.model_count.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "util/load_error.h"
#include "io/om/om_container.h"
#include "ir/model.h"
#include "ir/tensor.h"

namespace kiln::om {

inline constexpr const char* kGeDomain = "ge";

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

// One GE graph dump (ge_proto_*.txt): ge.proto.ModelDef in protobuf text format, built like MODEL_DEF but without
// weights (dumps carry none or inline them; Const ops keep their descriptors). Throws LoadError.
std::unique_ptr<Model> readGeProtoText(const std::string& text, const std::string& displayName,
                                       std::vector<std::string>& warnings);

}  // namespace kiln::om
