#pragma once
// TensorProto -> Tensor with every size checked against the bytes actually present. Shared by the model importer
// and the reader of ONNX test-data .pb files.
#include <onnx/onnx_pb.h>

#include <map>
#include <memory>
#include <string>

#include "ir/tensor.h"

namespace kiln::onnxio {

// Resolves external-data locations inside one directory; maps each data file once.
class ExternalDataResolver {
 public:
  explicit ExternalDataResolver(std::string baseDir) : baseDir_(std::move(baseDir)) {}
  // Validated slice of an external file; throws std::runtime_error when the location escapes baseDir (absolute
  // path, "..", a symlink pointing out), the file is missing, or offset/length run past its end.
  std::shared_ptr<const Storage> map(const std::string& location, std::string* canonicalPath);
  const std::string& baseDir() const { return baseDir_; }

 private:
  std::string baseDir_;
  std::map<std::string, std::shared_ptr<MappedFileStorage>> maps_;
};

// raw_data the parse left in the model file (initializer_bytes_in_file.h): `size` bytes at `offset` of `file`.
struct RawDataInFile {
  std::shared_ptr<const Storage> file;
  size_t offset = 0, size = 0;
};

// Converts and validates. raw_data is moved out of `proto` (not copied). `what` names the tensor in messages.
// Throws std::runtime_error with a one-line reason. A null resolver refuses external data. `rawInFile`: the
// tensor's raw_data, which `proto` holds empty, is these bytes of the file (the tensor becomes a slice of it).
Tensor tensorFromProto(onnx::TensorProto& proto, ExternalDataResolver* resolver, const std::string& what,
                       const RawDataInFile* rawInFile = nullptr);

// A sparse tensor (values + indices, linear [NNZ] or coordinate [NNZ, rank]) made dense. Refuses a dense form over
// `maxDenseBytes` (a lying shape must not allocate gigabytes) and indices out of range.
Tensor denseFromSparse(onnx::SparseTensorProto& proto, ExternalDataResolver* resolver, const std::string& what,
                       uint64_t maxDenseBytes = 1ull << 30);

}  // namespace kiln::onnxio
