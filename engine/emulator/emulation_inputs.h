#pragma once
// The inputs of an emulated run and the concrete shapes it compiles for — what `kiln run`, `kiln verify` and
// `kiln batch` share: a directory of input_<i>.pb, a NumPy .npz (whose arrays named after outputs are expected
// outputs), the <model stem>_io.npz beside the model by default, else reproducible random data; and binding the
// graph's symbolic input dims for the compiler (the input_shape option) so the memory plan and the timing see the
// shapes the data has.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "passes/options.h"

namespace kiln {

struct EmulationInputs {
  std::vector<Tensor> tensors;  // one per graph input of the original model
  std::string description;      // "random, seed 1", the directory or the archive
  // The arrays of a .npz given as inputs (or found beside the model): those named after graph outputs are the
  // expected outputs.
  std::vector<std::pair<std::string, Tensor>> archive;
  std::string archivePath;
};

// `from`: a directory (input_<i>.pb) or a .npz; without it and without `seed`, <model stem>_io.npz beside the model
// when there is one, else random data with seed 1. Random data takes its symbolic dims from `dims`; given data adds
// the dims it fills to `dims`. Throws LoadError for bad files, std::invalid_argument when a dim in `dims`
// contradicts the data, std::runtime_error when random data would pass `maxRandomBytes` (emulator.max_input_bytes).
EmulationInputs loadEmulationInputs(const std::optional<std::string>& from, std::optional<uint32_t> seed,
                                    const std::string& modelPath, const Graph& original,
                                    std::map<std::string, int64_t>& dims, int64_t maxRandomBytes);

// The symbol bindings a run starts from: the dim_values option, with `overrides` (kiln run --dim) winning; an
// override that changes a dim_values entry is written back, so the compiler binds the same extent.
std::map<std::string, int64_t> runDimBindings(Options& options, const std::map<std::string, int64_t>& overrides);

// <model stem>_io.npz beside the model, when there is one: the inputs (and expected outputs) it ships with.
std::optional<std::string> companionInputs(const std::string& modelPath);

// Sets input_shape from the graph's symbolic inputs (each symbol from `dims`, else 1) unless the option is set;
// returns the bindings it used as text ("batch=1, sequence=128"; empty when every input is static).
std::string bindSymbolicInputs(const Graph& original, const std::map<std::string, int64_t>& dims, Options& options);

}  // namespace kiln
