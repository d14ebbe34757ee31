#include "cli/emulation_args.h"

#include <algorithm>
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

namespace {

// "NAME=V[,V...]" for one input: its values, in the input's element type, at its made-up extents when the count
// matches them, else as a scalar (one value for a rank-0 input) or a vector.
void applyValue(const std::string& kv, const Graph& g, EmulationInputs& in) {
  std::vector<Tensor>& tensors = in.tensors;
  const size_t eq = kv.find('=');
  if (eq == std::string::npos || eq == 0) throw UsageError("--value takes NAME=V[,V...], not '" + kv + "'");
  const std::string name = kv.substr(0, eq);
  size_t index = g.inputs().size();
  std::string names;
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    if (g.inputs()[i]->name() == name) index = i;
    names += (names.empty() ? "" : ", ") + g.inputs()[i]->name();
  }
  if (index == g.inputs().size()) throw UsageError("--value: the model has no input '" + name + "' (inputs: " + names + ")");
  std::vector<double> values;
  for (size_t at = eq + 1; at <= kv.size();) {
    const size_t comma = std::min(kv.find(',', at), kv.size());
    const std::string item = kv.substr(at, comma - at);
    char* end = nullptr;
    const double v = std::strtod(item.c_str(), &end);
    if (item.empty() || !end || *end || values.size() >= 4096)
      throw UsageError("--value " + name + ": '" + item + "' is not a number (give up to 4096, comma-separated)");
    values.push_back(v);
    at = comma + 1;
  }
  const ValueType& type = g.inputs()[index]->type();
  const Tensor& made = tensors[index];
  // The extents the made-up data had (the binding's), else a static shape's, else a vector.
  const int64_t count = static_cast<int64_t>(values.size());
  std::vector<int64_t> dims;
  if (made.valid() && made.numel() == count)
    dims = made.dims();
  else if (type.shape.isStatic() || (made.valid() && type.shape.rankKnown() && type.shape.rank() != 1))
    throw UsageError("--value " + name + ": the input is " + type.toString() + ", " +
                     std::to_string(made.valid() ? made.numel() : type.shape.numel().value_or(0)) +
                     " values here, not " + std::to_string(count));
  else
    dims = {count};
  auto as = [&](auto zero) {
    std::vector<decltype(zero)> v;
    for (double x : values) v.push_back(static_cast<decltype(zero)>(x));
    return Tensor::fromVector(type.dtype, dims, v);
  };
  switch (type.dtype) {
    case DType::Int64: tensors[index] = as(int64_t{}); break;
    case DType::Int32: tensors[index] = as(int32_t{}); break;
    case DType::Float: tensors[index] = as(float{}); break;
    case DType::Double: tensors[index] = as(double{}); break;
    case DType::Bool: tensors[index] = as(uint8_t{}); break;
    default:
      throw UsageError("--value " + name + ": its type " + type.toString() +
                       " takes its data from a file (--inputs DIR|FILE.npz)");
  }
  if (index < in.madeUp.size()) in.madeUp[index] = false;
}

}  // namespace

EmulationInputs emulationInputs(const Args& args, const std::string& modelPath, const Model& original,
                                Options& options) {
  std::optional<uint32_t> seed;
  if (auto s = args.intValue("--random", 0, UINT32_MAX)) seed = static_cast<uint32_t>(*s);
  EmulationInputs in;
  try {
    in = loadEmulationInputs(args.value("--inputs"), seed, modelPath, original, options,
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
  if (auto it = args.values.find("--value"); it != args.values.end()) {
    std::string given;
    for (const std::string& kv : it->second) {
      applyValue(kv, *original.graph, in);
      given += (given.empty() ? "" : ", ") + kv;
    }
    in.description += "; given " + given;
  }
  return in;
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
