#include "ir/model.h"

namespace kiln {

int64_t Model::opsetFor(const std::string& opDomain) const {
  const std::string d = opDomain == "ai.onnx" ? "" : opDomain;
  auto it = opsets.find(d);
  if (it != opsets.end()) return it->second;
  return 0;  // not imported
}

}  // namespace kiln
