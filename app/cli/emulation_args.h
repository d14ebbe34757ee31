#pragma once
// What `kiln run` and `kiln verify` share on the command line: --dim bindings and the inputs (--inputs DIR|FILE.npz
// or --random SEED), handed to the engine's emulator/emulation_inputs (which `kiln batch` uses too).
#include <map>
#include <string>

#include "cli/args.h"
#include "emulator/emulation_inputs.h"
#include "ir/model.h"

namespace kiln::cli {

// Parses --dim SYMBOL=N (repeatable); UsageError otherwise.
std::map<std::string, int64_t> dimBindings(const Args& args);
// loadEmulationInputs with --inputs and --random (random data capped by the option emulator.max_input_bytes); a
// --dim that contradicts the data is a UsageError; random data over the cap a std::runtime_error naming the model.
// Given data adds its extents to the dim_values of `options`.
EmulationInputs emulationInputs(const Args& args, const std::string& modelPath, const Model& original,
                                Options& options);
// The binding a compile of `model` will use; a binding the model contradicts (input_shape against its static dims,
// two extents for one symbol) is a UsageError (exit 2) naming the model and the option. Empty for an .om.
ShapeBinding checkedBinding(const std::string& modelPath, const Model& model, const Options& options);
// bindForEmulation, a binding the model contradicts being a UsageError naming the model and the option.
ShapeBinding emulationBinding(const std::string& modelPath, const Model& original, Options& options);

}  // namespace kiln::cli
