#include "options/stream_max_parallel_num.h"

#include <stdexcept>

namespace kiln {

std::map<std::string, int> parseStreamMaxParallelNum(const std::string& text) {
  std::map<std::string, int> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(start, end - start);
    start = end + 1;
    if (item.empty()) continue;
    const size_t colon = item.find(':');
    if (colon == std::string::npos) throw std::invalid_argument("'" + item + "' is not ENGINE:N");
    const std::string engine = item.substr(0, colon), count = item.substr(colon + 1);
    std::string key;
    if (engine == "AIcoreEngine") key = "aicore";
    else if (engine == "VectorEngine") key = "aicore.vector";
    else if (engine == "CubeEngine") key = "aicore.cube";
    else if (engine == "DNN_VM_AICPU") key = "aicpu";
    else throw std::invalid_argument("unknown engine '" + engine + "' (AIcoreEngine, CubeEngine, VectorEngine, "
                                     "DNN_VM_AICPU)");
    if (count.empty() || count.size() > 4 || count.find_first_not_of("0123456789") != std::string::npos ||
        std::stoi(count) < 1)
      throw std::invalid_argument("'" + item + "' needs a stream count from 1 to 9999");
    out[key] = std::stoi(count);
  }
  return out;
}

}  // namespace kiln
