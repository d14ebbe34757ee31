#pragma once
// The inputs of an emulated run and the concrete shapes it compiles for — what `kiln run`, `kiln verify`,
// `kiln batch` and the workbench share: a directory of input_<i>.pb, a NumPy .npz (whose arrays named after outputs
// are expected outputs), the <model stem>_io.npz beside the model by default, else reproducible random data. The
// shapes are the compiler's own binding (ir/shape_binding.h): given data adds the extents it has to dim_values, and
// random data is made at the extents InputShapeBinding will bind, so the emulator, the memory plan and the timing
// see one set of shapes.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "ir/model.h"
#include "options/options.h"

namespace kiln {

struct EmulationInputs {
  std::vector<Tensor> tensors;  // one per graph input of the original model
  std::string description;      // "random, seed 1", the directory or the archive
  std::vector<bool> madeUp;     // per input: random data Kiln made up, not data the user gave
  // The arrays of a .npz given as inputs (or found beside the model): those named after graph outputs are the
  // expected outputs.
  std::vector<std::pair<std::string, Tensor>> archive;
  std::string archivePath;
};

// `from`: a directory (input_<i>.pb) or a .npz; without it and without `seed`, <model stem>_io.npz beside the model
// when there is one, else random data with seed 1. Given data adds the extents it fills to the dim_values option;
// random data is made at the binding's extents. Throws LoadError for bad files, std::invalid_argument when a
// binding contradicts the data or the model, std::runtime_error when random data would pass `maxRandomBytes`
// (emulator.max_input_bytes).
EmulationInputs loadEmulationInputs(const std::optional<std::string>& from, std::optional<uint32_t> seed,
                                    const std::string& modelPath, const Model& original, Options& options,
                                    int64_t maxRandomBytes);

// The symbol bindings a run starts from: the dim_values option, with `overrides` (kiln run --dim) winning; an
// override that changes a dim_values entry is written back, so the compiler binds the same extent.
std::map<std::string, int64_t> runDimBindings(Options& options, const std::map<std::string, int64_t>& overrides);

// <model stem>_io.npz beside the model, when there is one: the inputs (and expected outputs) it ships with.
std::optional<std::string> companionInputs(const std::string& modelPath);

// The binding a run compiles and emulates at: the compiler's (resolveFittedBinding over the options). A run needs
// every extent, so under dim_values=keep the symbols left open get the policy's extents here, written into
// input_shape for the compiler. Throws std::invalid_argument (naming the option) for a binding the model
// contradicts.
ShapeBinding bindForEmulation(const Model& original, Options& options);

}  // namespace kiln
