#pragma once
// Importing a model without copying its weights. Protobuf copies every initializer's raw_data into memory of its
// own while it parses; for a weight-heavy model that copy (and the page faults of the new memory) was a third of
// `kiln compile` (sample resnet50: ~50 of 180 ms). Here the model's bytes are rewritten once, walking the wire
// format down ModelProto.graph -> GraphProto.initializer -> TensorProto.raw_data only: every large raw_data is
// left out (kept as an empty field, so the tensor still says its data is raw) and its place in the file noted.
// The importer then parses the small rewritten message and makes each such initializer a slice of the mapped file.
//
// Only the main graph's initializers are handled; Constant nodes and subgraphs keep their bytes in the parse. Any
// wire data the walk does not expect (a graph field given twice, groups, lengths past the end) gives no result and
// the caller parses the file as it is, so protobuf's own checks and messages apply.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::onnxio {

struct InitializerBytes {
  size_t offset = 0, size = 0;  // where the raw_data bytes are in the file
};

struct ModelWithoutInitializerBytes {
  std::string proto;  // the ModelProto with the large raw_data fields emptied
  // By position among the main graph's initializers; nullopt where the initializer kept its bytes.
  std::vector<std::optional<InitializerBytes>> initializers;
  size_t bytesLeftInFile = 0;
};

// nullopt when the bytes are not a ModelProto the walk understands, or nothing is as large as `minBytes`.
std::optional<ModelWithoutInitializerBytes> leaveInitializerBytesInFile(std::string_view model, size_t minBytes);

}  // namespace kiln::onnxio
