#pragma once
// GE's graph — a ge.proto.ModelDef, from an .om's MODEL_DEF, a GE graph dump (io/gedump) or an `atc --mode=1` JSON
// (io/atc) — as a kiln::Model. The one place GE's ops become Kiln's IR, so every GE file reads the same way:
//   - ops keep GE's types (Data, Const, Conv2D, TransData, NetOutput...) in the domain "ge" (kGeDomain), so the
//     ONNX registry never mistakes them for ONNX ops of the same name;
//   - values: output i of op X is the value "X:i" (as GE's "src:idx" references name it), typed from the op's
//     output_desc: dtype, the physical shape GE records (-1 = unknown dim, a lone -2 = unknown rank) and the layout
//     as a Format where Kiln has one (otherwise ND, the layout string kept in an annotation);
//   - a Data op reads a graph input named after the op; NetOutput gets one output per input ("NetOutput:i"), which
//     are the graph's outputs;
//   - a Const's weights (its `value` attribute): a slice of WEIGHTS_DATA at data_offset (never copied), or the
//     bytes a dump carries inline;
//   - control edges ("src:-1") are not IR edges (the IR has none): they are listed in "om.control_inputs";
//   - GraphDefs named by OpDef.subgraph_name become subgraphs held by the op's graph-list attribute "subgraphs";
//   - op attributes (sorted by name) map onto Kiln's kinds: bool -> int 0/1, data type -> its GE code, a tensor
//     descriptor -> a type; lossy on purpose (this is for display, not for writing the file back): a tensor-valued
//     attribute other than a Const's `value` keeps only its type, bytes above 4 KiB become "<N bytes>", a function
//     its name, list_list_int one "a,b,c" string per row;
//   - fields Kiln's schema does not know (lenient_proto.h's extras) become string attributes "raw.<path>";
//   - names and strings that are not UTF-8 are decoded (util/text_encoding.h);
//   - per-op facts (om.id, om.stream_id, om.input_offsets, om.output_offsets, om.workspace, om.workspace_bytes,
//     om.block_dim, om.output<i>.origin_format / origin_shape / layout, om.output<i>.size) are annotations; model
//     attributes are metadata "om.<key>" (memory_size, weight_size, stream_num, soc_version...).
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/tensor.h"

namespace ge::proto {
class ModelDef;
}  // namespace ge::proto

namespace kiln {
struct Model;
class Node;
}  // namespace kiln

namespace kiln::lenient {
struct ParseReport;
}  // namespace kiln::lenient

namespace kiln::om {

inline constexpr const char* kGeDomain = "ge";

// Where a Const's data_offset points: the .om's WEIGHTS_DATA partition inside `storage`.
struct GeWeights {
  std::shared_ptr<const Storage> storage;
  uint64_t offset = 0, size = 0;
};

struct GeModelIndex {
  std::unordered_map<int64_t, Node*> byId;        // OpDef.id -> node, for linking tasks
  std::unordered_map<std::string, Node*> byName;  // op name -> node
};

// Builds `m`'s graph from `md`. `weights` null: a file without a weights partition (its
// Consts keep inline data or their type only). `extras`: what a lenient parse of `md` kept (null for binary files).
// Throws LoadError naming `file`, the op and its graph for anything malformed.
GeModelIndex buildGeModel(Model& m, const ge::proto::ModelDef& md, const std::string& file, const GeWeights* weights,
                          const lenient::ParseReport* extras, std::vector<std::string>& warnings);

// Scalar model attributes as metadata ("om.<key>"); lists and long bytes are left out.
void addGeModelMetadata(Model& m, const ge::proto::ModelDef& md);

// A ModelDef read from a text form (a graph dump, an om -> JSON): built with its metadata, the parse's summary added
// to `warnings`, and — when it carries GE's plan — annotated as a compiled model (om_plan.h) and marked precompiled.
std::unique_ptr<Model> buildGeTextModel(const ge::proto::ModelDef& md, const std::string& displayName,
                                        const lenient::ParseReport* report, std::vector<std::string>& warnings);

// True when the graph carries a compiled plan: some op records output offsets (GE's Build stage, an .om).
bool carriesGePlan(const Model& m);

}  // namespace kiln::om
