#include "cli/emulation_args.h"

#include <cstdlib>

#include "emulator/model_inputs.h"
#include "util/json.h"

namespace kiln::cli {

std::map<std::string, int64_t> dimBindings(const Args& args) {
  std::map<std::string, int64_t> dims;
  if (auto it = args.values.find("--dim"); it != args.values.end())
    for (const std::string& kv : it->second) {
      const size_t eq = kv.find('=');
      char* end = nullptr;
      const long long v = eq == std::string::npos ? -1 : std::strtoll(kv.c_str() + eq + 1, &end, 10);
      if (eq == std::string::npos || eq == 0 || v < 1 || v > (1 << 20) || !end || *end)
        throw UsageError("--dim takes SYMBOL=N with N in 1..1048576, not '" + kv + "'");
      dims[kv.substr(0, eq)] = v;
    }
  return dims;
}

std::string bindSymbolicInputs(const Graph& original, const std::map<std::string, int64_t>& dims, Options& options) {
  if (!options.getString("input_shape").empty()) return {};
  std::string bound;
  const std::string spec = inputShapeSpec(original, dims, &bound);
  if (!spec.empty()) options.setValue("input_shape", Json(spec), "bound for emulation");
  return bound;
}

EmulationInputs emulationInputs(const Args& args, const Graph& original, const std::map<std::string, int64_t>& dims) {
  EmulationInputs in;
  if (auto dir = args.value("--inputs")) {
    in.tensors = readInputFiles(original, *dir);
    in.description = *dir;
  } else {
    const auto seed = static_cast<uint32_t>(args.intValue("--random", 0, UINT32_MAX).value_or(1));
    in.tensors = randomInputs(original, seed, dims);
    in.description = "random, seed " + std::to_string(seed);
  }
  return in;
}

}  // namespace kiln::cli
