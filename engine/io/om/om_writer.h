#pragma once
// Writes a compiled model as an Ascend offline model (.om): the real container (v2 header, wide partition table)
// holding MODEL_INOUT_INFO, MODEL_DEF (ge.proto.ModelDef), WEIGHTS_DATA and TASK_INFO (domi.ModelTaskDef).
// The model must have been through Stage 3: offsets come from the "mem.in"/"mem.out" annotations, streams from
// "stream", the task list from the annotated graph (schedule/task_list.h).
//
// Device addresses as the .om records them: the arena (feature maps) from offset 0; graph inputs and outputs
// (zero-copy, the caller's buffers) after it, 32-byte aligned; memory_size covers both. Weights are offsets into
// WEIGHTS_DATA (512-byte aligned), recorded as a Const op's data_offset and as its readers' input_i.
// Op types are GE's where Kiln's op has a GE counterpart (Conv → Conv2D, MatMul → MatMulV2, Softmax → SoftmaxV2,
// kiln:TransData → TransData...); otherwise the ONNX name. The Kiln op type and every annotation travel as
// "_kiln.*" string attributes, so a Kiln reader can show them again.
#include <cstdint>
#include <string>
#include <vector>

namespace google::protobuf {
class MessageLite;
}  // namespace google::protobuf

namespace kiln {
struct Model;
class Node;
class Options;
}  // namespace kiln

namespace kiln::om {

// The whole file as bytes. Throws std::runtime_error when the model has not been compiled (no Stage 3
// annotations) or cannot be represented (a subgraph-holding op, an unsized tensor).
std::string buildOmFile(const Model& compiled, const Options& options);
// Writes it; throws std::runtime_error naming the path when it cannot be written.
void writeOmFile(const Model& compiled, const Options& options, const std::string& path);
// A message's bytes with map fields (every op's attributes) in key order: protobuf otherwise writes them in hash
// order, which changes from run to run, and one model compiled twice gave two different files.
std::string deterministicBytes(const google::protobuf::MessageLite& message);

// ATC's dynamic gears in one .om, as GE's multi-batch pass builds it (om_gear_writer.cpp): a root graph Data ->
// (ascend_mbatch_shape_data, ascend_mbatch_shape_const -> MapIndex) -> Case -> NetOutput whose branches Batch_0..N
// are the gears' compiled graphs (each with its own plan and offsets from one base: memory_size is the largest
// gear's), Case carrying _batch_num, _pred_value_<i> and mbatch_dynamic_type, MODEL_INOUT_INFO the inputs' -1 dims
// and a DYNAMIC_BATCH / DYNAMIC_HW / DYNAMIC_DIMS record, the task list a LABEL_SWITCH into one label per gear.
struct GearModel {
  const Model* compiled = nullptr;  // through Stage 3
  std::vector<int64_t> values;      // the gear: a batch size, H and W, or the dims
};
// `gearOption` is the ATC option the gears came from ("dynamic_batch_size", "dynamic_image_size", "dynamic_dims").
std::string buildGearOmFile(const std::vector<GearModel>& gears, const std::string& gearOption, const Options& options);
void writeGearOmFile(const std::vector<GearModel>& gears, const std::string& gearOption, const Options& options,
                     const std::string& path);

// A graph at any point of the pipeline as GE dumps it: ge.proto.ModelDef in protobuf text format (the
// ge_proto_*.txt files of DUMP_GE_GRAPH), without weights and, before Stage 3, without memory offsets.
std::string modelDefText(const Model& m);

// GE's names for Kiln's op types, "" when Kiln keeps its own.
std::string geOpType(const std::string& qualifiedType, size_t inputRank);
// The op's type as GE names it: a GE op's own type, else the name above, else its own type. The vocabulary op
// histograms of GE and Kiln compiles are compared in, and SoC profiles' per-op calibration is keyed by.
std::string geVocabularyType(const Node& n);

}  // namespace kiln::om
