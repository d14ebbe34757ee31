#pragma once
// Lookups in Model::metadata (key/value pairs as ONNX metadata_props or an .om's model attributes carry them).
#include <cstdint>
#include <string>

namespace kiln {

struct Model;

// The first value under `key`, "" when there is none.
std::string metadataValue(const Model& m, const std::string& key);
// That value as an unsigned number; 0 when it is absent or not a number.
uint64_t metadataU64(const Model& m, const std::string& key);

}  // namespace kiln
