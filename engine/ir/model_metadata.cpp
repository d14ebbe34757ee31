#include "ir/model_metadata.h"

#include <charconv>

#include "ir/model.h"

namespace kiln {

std::string metadataValue(const Model& m, const std::string& key) {
  for (const auto& [k, v] : m.metadata)
    if (k == key) return v;
  return {};
}

uint64_t metadataU64(const Model& m, const std::string& key) {
  const std::string v = metadataValue(m, key);
  uint64_t out = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  return ec == std::errc() && end == v.data() + v.size() ? out : 0;
}

}  // namespace kiln
