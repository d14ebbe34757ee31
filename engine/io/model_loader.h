#pragma once
// Opens any model file Kiln reads, found by content whatever the extension — ONNX (binary, or protobuf text),
// Ascend .om (its "IMOD" magic), one GE graph dump (ge_proto_*.txt, or ge_onnx_*.pbtxt: io/gedump), an
// `atc --mode=1` JSON (io/atc) — and runs type/shape inference and the verifier. The single entry point the CLI,
// the GUI and batch mode use. (A folder of GE graph dumps is not a model but a recorded compile:
// history/ge_dump_import.h reads it into the history.)
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "util/load_error.h"
#include "ir/model.h"
#include "ir/opdefs/shape_inference.h"

namespace kiln {

enum class ModelFormat {
  Onnx,
  OnnxText,
  AscendOm,
  GeDump,
  GeOnnxDump,
  AtcJson,
  FusionResult,
  MsprofProfile,  // an op_summary / task_time CSV of the Ascend profiler: a measured run, not a model
  OtherJson,
  Unknown
};

// By content (magic bytes, the first fields of a text), falling back to the extension. FusionResult is ATC's
// fusion_result.json, which is not a model (kiln inspect reads it: io/atc/fusion_result.h); OtherJson any other JSON
// that is no object (a Chrome trace...), also not a model.
ModelFormat detectModelFormat(const std::string& path);
// What the format is called in messages ("a GE graph dump").
std::string modelFormatName(ModelFormat f);
// Formats that hold a graph GE made (compiled or not): their ops are GE's.
bool isGeFormat(ModelFormat f);

struct LoadedModel {
  std::unique_ptr<Model> model;
  std::vector<std::string> warnings;  // import, checker and verifier findings
  InferenceReport inference;
};

// What a model file may cost before it is refused (the option max_model_bytes; README "Hardening").
struct LoadLimits {
  uint64_t maxModelBytes = 4ull << 30;
  // An ONNX model's weights stay in the mapped file (OnnxReadOptions::weightsStayInFile): for the headless
  // commands, which load, compile and exit; the workbench copies.
  bool weightsStayInFile = false;
  // For the model a command will run: weights whose bytes sit at an address no multiple of their element size (an
  // ONNX file's raw_data lies anywhere in the mapped file) are copied out, aligned, at load — each kernel reading one
  // would copy it on every run — except tables only Gather reads (an embedding: a run reads a few of its rows).
  bool alignWeights = false;
};

class Options;
// An option set's max_model_bytes. `headless`: weightsStayInFile.
LoadLimits loadLimits(const Options& options, bool headless = false);

// `path` may pick one model of a multi-model .om: "FILE.om#N" (io/model_path.h). Throws LoadError naming the file
// and the problem.
LoadedModel loadModel(const std::string& path, const LoadLimits& limits = {});

}  // namespace kiln
