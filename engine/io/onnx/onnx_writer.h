#pragma once
// ONNX export of a Model: the checker accepts the result and shapes round-trip. Value names are made unique across
// the whole model (passes may create clashes); Kiln formats travel in TypeProto.denotation.
#include <cstdint>
#include <string>

#include "ir/model.h"

namespace kiln {

struct OnnxWriteOptions {
  // Tensors of at least this many bytes go to one external data file beside the model (0 = keep everything inline;
  // a model whose weights would pass protobuf's 2 GiB limit is written with external data regardless).
  uint64_t externalDataThreshold = 0;
  bool writeValueInfo = true;  // types of intermediate values
};

// Throws std::runtime_error naming the problem (e.g. cannot write the file).
void writeOnnxFile(const Model& model, const std::string& path, const OnnxWriteOptions& options = {});
// Serialized bytes with all tensors inline.
std::string writeOnnxBytes(const Model& model);

}  // namespace kiln
