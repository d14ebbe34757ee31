#pragma once
// What `kiln run` and `kiln verify` share: --dim bindings, binding symbolic input dims for the compiler (the
// input_shape option, unless given), and the inputs (--inputs DIR|FILE.npz or --random SEED).
#include <map>
#include <string>
#include <vector>

#include "cli/args.h"
#include "ir/graph.h"
#include "passes/options.h"

namespace kiln::cli {

struct EmulationInputs {
  std::vector<Tensor> tensors;  // one per graph input of the original model
  std::string description;      // "random, seed 1", the directory or the archive
  // The arrays of a .npz given as inputs (or found beside the model): those named after graph outputs are the
  // expected outputs.
  std::vector<std::pair<std::string, Tensor>> archive;
  std::string archivePath;
  std::string boundDims;        // "batch=1, sequence=128" (empty when every input is static)
};

// Parses --dim SYMBOL=N (repeatable); UsageError otherwise.
std::map<std::string, int64_t> dimBindings(const Args& args);
// Sets input_shape from the graph's symbolic inputs (each symbol from `dims`, else 1) unless the option is set;
// returns the bindings it used as text.
std::string bindSymbolicInputs(const Graph& original, const std::map<std::string, int64_t>& dims, Options& options);
// --inputs DIR (input_<i>.pb) or FILE.npz, --random SEED, else <model stem>_io.npz beside the model when there is
// one, else random with seed 1. Random data takes its symbolic dims from `dims`; given data adds the dims it has to
// `dims` (a --dim that contradicts the data is a UsageError).
EmulationInputs emulationInputs(const Args& args, const std::string& modelPath, const Graph& original,
                                std::map<std::string, int64_t>& dims);

}  // namespace kiln::cli
