#include "emulator/emulation_inputs.h"

#include <filesystem>
#include <stdexcept>

#include "emulator/model_inputs.h"
#include "passes/prepare/binding_fit.h"
#include "io/numpy/npz_reader.h"
#include "util/json.h"

namespace kiln {

namespace {

// Writes `dims` back into dim_values, keeping its "keep" item; the entries it adds or changes say `source`.
void setDimValues(Options& options, const std::map<std::string, int64_t>& dims, const std::string& source) {
  std::string text = options.keepSymbolicDims() ? "keep" : "";
  for (const auto& [name, v] : dims) text += (text.empty() ? "" : ";") + name + ":" + std::to_string(v);
  if (text == options.getString("dim_values")) return;
  const std::map<std::string, int64_t> before = options.dimValues();
  std::map<std::string, std::string> sources = options.dimValueSources();
  options.setValue("dim_values", Json(text), source);
  for (const auto& [name, v] : dims) {
    auto it = before.find(name);
    if (it == before.end() || it->second != v) sources[name] = source;
  }
  for (const auto& [name, label] : sources)
    if (dims.count(name)) options.setDimValueSource(name, label);
}

}  // namespace

ShapeBinding bindForEmulation(const Model& original, Options& options) {
  BindingRequest request = options.bindingRequest();
  ShapeBinding binding = resolveFittedBinding(original, request);
  if (binding.kept.empty()) return binding;
  request.keep = false;  // the open symbols need extents to make data: the policy's, fixed through input_shape
  binding = resolveFittedBinding(original, request);
  if (!options.getString("input_shape").empty()) return binding;  // resolveShapeBinding checked it already
  const std::string spec = inputShapeSpec(*original.graph, binding.values());
  if (!spec.empty()) options.setValue("input_shape", Json(spec), "bound for emulation");
  return binding;
}

std::map<std::string, int64_t> runDimBindings(Options& options, const std::map<std::string, int64_t>& overrides) {
  std::map<std::string, int64_t> dims = options.dimValues();
  bool changed = false;
  for (const auto& [name, v] : overrides) {
    auto [it, fresh] = dims.emplace(name, v);
    if (!fresh && it->second != v) it->second = v, changed = true;
  }
  if (changed || dims.size() != options.dimValues().size()) setDimValues(options, dims, "--dim");
  return dims;
}

namespace {

// The symbolic input dims the given tensors fill, added to `dims`.
void dimsFromData(const Graph& g, const std::vector<Tensor>& tensors, std::map<std::string, int64_t>& dims) {
  for (size_t i = 0; i < g.inputs().size() && i < tensors.size(); ++i) {
    const Shape& s = g.inputs()[i]->type().shape;
    if (!tensors[i].valid() || !s.rankKnown() || s.rank() != tensors[i].dims().size()) continue;
    for (size_t a = 0; a < s.rank(); ++a) {
      if (!s[a].isSymbolic()) continue;
      const int64_t have = tensors[i].dims()[a];
      auto [it, added] = dims.emplace(s[a].symbol, have);
      if (!added && it->second != have)
        throw std::invalid_argument("dimension " + s[a].symbol + "=" + std::to_string(it->second) + " (--dim or dim_values)" +
                                    " contradicts input '" + g.inputs()[i]->name() + "', whose data has " +
                                    std::to_string(have));
    }
  }
}

}  // namespace

std::optional<std::string> companionInputs(const std::string& modelPath) {
  namespace fs = std::filesystem;
  const fs::path p(modelPath);
  const fs::path companion = p.parent_path() / (p.stem().string() + "_io.npz");
  std::error_code ec;
  if (fs::is_regular_file(companion, ec)) return companion.string();
  return std::nullopt;
}

EmulationInputs loadEmulationInputs(const std::optional<std::string>& given, std::optional<uint32_t> seed,
                                    const std::string& modelPath, const Model& original, Options& options,
                                    int64_t maxRandomBytes) {
  namespace fs = std::filesystem;
  EmulationInputs in;
  std::map<std::string, int64_t> dims = options.dimValues();
  // Given data: its extents join dim_values, so the compile binds what the data has.
  const auto adoptDataDims = [&] {
    dimsFromData(*original.graph, in.tensors, dims);
    setDimValues(options, dims, "input data");
  };
  std::optional<std::string> from = given;
  if (!from && !seed) from = companionInputs(modelPath);
  if (from && fs::path(*from).extension() == ".npz") {
    in.archive = readNpz(*from);
    in.archivePath = *from;
    in.tensors = inputsFromArrays(*original.graph, in.archive, *from);
    in.description = *from;
    adoptDataDims();
  } else if (from) {
    in.tensors = readInputFiles(*original.graph, *from);
    in.description = *from;
    adoptDataDims();
  } else {
    const uint32_t s = seed.value_or(1);
    in.tensors = randomInputs(*original.graph, s, bindForEmulation(original, options).values(), 2, maxRandomBytes);
    in.description = "random, seed " + std::to_string(s);
    in.madeUp.assign(in.tensors.size(), true);
  }
  return in;
}

}  // namespace kiln
