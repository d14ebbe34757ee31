#pragma once
// ONNX import: any model libonnx 1.12 can parse (newer IR versions too), with external data, subgraphs and
// value_info. Everything read is untrusted: problems become a LoadError naming the file and the problem.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "util/load_error.h"
#include "ir/model.h"

namespace kiln {

struct OnnxReadOptions {
  // Run libonnx's checker; its complaints become warnings (newer IR/opsets parse fine but fail the 1.12 checker).
  bool runChecker = true;
  // Files above this size are refused before reading (protobuf's own limit is 2 GiB per message).
  uint64_t maxFileBytes = 2ull << 30;
  // The main graph's initializers become slices of the mapped file instead of copies (no copy, no new pages: a
  // third of a weight-heavy compile). The file must then not be rewritten while the model is in use: a truncated
  // file faults (SIGBUS) and a rewritten one changes the weights. For processes that read a model, compile it and
  // exit (the headless commands); the workbench, which keeps models open for a session, copies.
  bool weightsStayInFile = false;
};

struct OnnxImport {
  std::unique_ptr<Model> model;
  std::vector<std::string> warnings;
};

// Throws LoadError.
OnnxImport readOnnxFile(const std::string& path, const OnnxReadOptions& options = {});
// From bytes in memory. External data is resolved against baseDir; an empty baseDir refuses external data.
OnnxImport readOnnxBytes(std::string bytes, const std::string& displayName, const std::string& baseDir,
                         const OnnxReadOptions& options = {});

// An ONNX model written as protobuf text (.pbtxt, .textproto), read generously (io/lenient: fields this libonnx does
// not know are listed in a warning, not an error) and imported as the binary model it describes.
OnnxImport readOnnxText(const std::string& path, const OnnxReadOptions& options = {});

}  // namespace kiln
