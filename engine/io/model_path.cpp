#include "io/model_path.h"

#include <filesystem>

namespace kiln {

ModelPath parseModelPath(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) return {path, std::nullopt};
  const size_t hash = path.rfind('#');
  if (hash == std::string::npos || hash == 0 || hash + 1 == path.size() || path.size() - hash - 1 > 6)
    return {path, std::nullopt};
  size_t index = 0;
  for (size_t i = hash + 1; i < path.size(); ++i) {
    if (path[i] < '0' || path[i] > '9') return {path, std::nullopt};
    index = index * 10 + size_t(path[i] - '0');
  }
  std::string file = path.substr(0, hash);
  if (!std::filesystem::is_regular_file(file, ec)) return {path, std::nullopt};
  return {std::move(file), index};
}

bool modelPathExists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(parseModelPath(path).file, ec);
}

}  // namespace kiln
