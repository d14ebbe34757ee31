#pragma once
// Reader for ONNX test-data tensor files (a serialized TensorProto per file: input_0.pb, output_0.pb, the
// light_* models' *_output_0.pb). Throws LoadError naming the file.
#include <string>

#include "ir/tensor.h"

namespace kiln {

struct NamedTensor {
  std::string name;
  Tensor tensor;
};

NamedTensor readTensorFile(const std::string& path);
NamedTensor readTensorBytes(std::string bytes, const std::string& displayName);

}  // namespace kiln
