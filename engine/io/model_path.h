#pragma once
// A model path as users give it: a file, or one model of a multi-model Ascend .om as "FILE.om#N" (N counts from 0,
// model 0 being the root). The suffix is a path of its own everywhere a model path goes — the command line, the
// workbench's open box and recent list, batch, and the history's recorded path — so a rerun reopens the same model.
// A file whose own name ends in "#N" is still taken as it is.
#include <cstddef>
#include <optional>
#include <string>

namespace kiln {

struct ModelPath {
  std::string file;                  // what to open
  std::optional<size_t> modelIndex;  // "#N": which model of the file
};

ModelPath parseModelPath(const std::string& path);

// The file exists and is not a directory (what the workbench and batch check before loading).
bool modelPathExists(const std::string& path);

}  // namespace kiln
