#pragma once
// One GE graph dump as a kiln::Model, so a single dump opens like a model (kiln inspect, kiln compile, the
// workbench) and a folder of them imports as a recorded run (history/ge_dump_import.h).
//   - ge_proto_*.txt: ge.proto.ModelDef in protobuf text format, read generously (io/lenient: fields Kiln's schema
//     does not know become "raw.<path>" attributes) and built by io/om/ge_model_builder.h like an .om's graph.
//   - ge_onnx_*.pbtxt: the same graph as GE writes it in ONNX text — op_type "ge:<Type>", inputs "src:index", each
//     descriptor field spelled as an attribute ("output_desc_dtype:0" = "DT_FLOAT", "output_desc_shape:0",
//     "input_desc_attr_<key>:1"...), a Const's value as "value_desc_*", the op's own fields (id, stream_id, input_i,
//     output_i...) as attributes of those names. It is turned back into the ModelDef it was written from. GE writes
//     each subgraph as a node of op_type "subgraph" holding it in attribute "graph", and does not say which op calls
//     it: a subgraph is linked to the one op whose name starts with the subgraph's name and "_" (GE names a
//     PartitionedCall after the subgraph it calls); one with no such op, or several, is listed in a warning.
// A Build-stage dump records GE's plan (offsets, streams): the model is then marked precompiled, as an .om is, and
// its plan is what the views draw (io/om/om_plan.h).
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ir/model.h"

namespace kiln::gedump {

inline constexpr uintmax_t kMaxDumpBytes = uintmax_t{512} << 20;  // one stage's text

// What a text file holds, by its first bytes: a GE ModelDef, ONNX text, JSON, or none of them.
enum class TextKind { GeProto, OnnxText, Json, Unknown };
TextKind sniffText(std::string_view head);

std::unique_ptr<Model> readGeProtoDump(std::string_view text, const std::string& displayName,
                                       std::vector<std::string>& warnings);
std::unique_ptr<Model> readGeOnnxDump(std::string_view text, const std::string& displayName,
                                      std::vector<std::string>& warnings);

// The file's whole text, refused above kMaxDumpBytes. Throws LoadError.
std::string readDumpText(const std::string& path);

}  // namespace kiln::gedump
