#pragma once
// Opens any model file Kiln reads (ONNX, Ascend .om — found by its "IMOD" magic whatever the extension), runs
// type/shape inference and the verifier. The single entry point the CLI, the GUI and batch mode use. (A folder of
// GE graph dumps is not a model but a recorded compile: history/ge_dump_import.h reads it into the history.)
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "util/load_error.h"
#include "ir/model.h"
#include "ir/opdefs/shape_inference.h"

namespace kiln {

enum class ModelFormat { Onnx, AscendOm, Unknown };

// By content (magic bytes), falling back to the extension.
ModelFormat detectModelFormat(const std::string& path);

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
};

class Options;
// An option set's max_model_bytes. `headless`: weightsStayInFile.
LoadLimits loadLimits(const Options& options, bool headless = false);

// `path` may pick one model of a multi-model .om: "FILE.om#N" (io/model_path.h). Throws LoadError naming the file
// and the problem.
LoadedModel loadModel(const std::string& path, const LoadLimits& limits = {});

}  // namespace kiln
