#include "emulator/emulation_check.h"

#include <cstdio>

namespace kiln {

bool numericsGated(const Options& options) {
  const std::string precision = options.getString("precision_mode");
  return precision == "force_fp32" || precision == "must_keep_origin_dtype";
}

std::string numericsMismatch(const EmulationReport& report, double rtol) {
  for (size_t i = 0; i < report.compiled.size() && i < report.reference.size(); ++i) {
    const TensorDifference d =
        compareTensors(report.compiled[i], report.reference[i], scaledTolerance(report.reference[i], rtol));
    if (d.within()) continue;
    const std::string name = i < report.errors.size() ? report.errors[i].name : "#" + std::to_string(i);
    if (!d.comparable) return "output '" + name + "': " + d.firstMismatch;
    char buf[160];
    std::snprintf(buf, sizeof buf, "output '%s': max abs %.3g, %lld elements over rtol %.3g of its scale",
                  name.c_str(), d.maxAbs, static_cast<long long>(d.mismatches), rtol);
    return buf;
  }
  return {};
}

}  // namespace kiln
