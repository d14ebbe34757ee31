#include "cli/emulation_args.h"

#include <cstdint>
#include <cstdlib>
#include <stdexcept>

#include "util/load_error.h"

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

EmulationInputs emulationInputs(const Args& args, const std::string& modelPath, const Model& original,
                                Options& options) {
  std::optional<uint32_t> seed;
  if (auto s = args.intValue("--random", 0, UINT32_MAX)) seed = static_cast<uint32_t>(*s);
  try {
    return loadEmulationInputs(args.value("--inputs"), seed, modelPath, original, options,
                               options.getInt(kEmulatorInputKey));
  } catch (const std::invalid_argument& e) {
    throw UsageError(modelPath + ": " + e.what());
  } catch (const OptionError& e) {
    throw UsageError(e.what());
  } catch (const LoadError&) {
    throw;
  } catch (const std::runtime_error& e) {  // no random data for this model (too large, unknown type)
    throw std::runtime_error(modelPath + ": " + e.what());
  }
}

}  // namespace kiln::cli

namespace kiln::cli {

ShapeBinding checkedBinding(const std::string& modelPath, const Model& model, const Options& options) {
  if (model.precompiled) return {};
  try {
    return resolveShapeBinding(*model.graph, options.bindingRequest());
  } catch (const std::invalid_argument& e) {
    throw UsageError(modelPath + ": " + e.what());
  } catch (const OptionError& e) {
    throw UsageError(e.what());
  }
}

ShapeBinding emulationBinding(const std::string& modelPath, const Model& original, Options& options) {
  ShapeBinding binding;
  try {
    binding = bindForEmulation(original, options);
  } catch (const std::invalid_argument& e) {
    throw UsageError(modelPath + ": " + e.what());
  }
  // An option file serves many models, but --dim is given for this one: a name it does not have is a mistake.
  const std::map<std::string, std::string> sources = options.dimValueSources();
  for (const std::string& name : binding.ignored)
    if (auto it = sources.find(name); it != sources.end() && it->second == "--dim") {
      std::string symbols;
      for (const SymbolSite& s : inputSymbols(*original.graph)) symbols += (symbols.empty() ? "" : ", ") + s.symbol;
      throw UsageError(modelPath + ": --dim " + name + ": the model has no such symbol or role" +
                       (symbols.empty() ? std::string(" (no symbolic dimension at all)") : " (its symbols: " + symbols + ")"));
    }
  return binding;
}

}  // namespace kiln::cli
