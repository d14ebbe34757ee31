#include "emulator/timing/model_soc.h"

#include <algorithm>
#include <cctype>

#include "emulator/timing/soc_profile.h"
#include "ir/model.h"
#include "ir/model_metadata.h"
#include "options/options.h"

namespace kiln {

namespace {
std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}
}  // namespace

std::string socVersionFor(const Model& m, const Options& options) {
  if (std::string chosen = options.getString("soc_profile"); !chosen.empty()) return chosen;
  if (m.precompiled) {
    const std::string recorded = lower(metadataValue(m, "om.soc_version"));
    for (const std::string& name : SocProfile::availableNames())
      if (!recorded.empty() && lower(name) == recorded) return name;
  }
  return options.getString("soc_version");
}

}  // namespace kiln
