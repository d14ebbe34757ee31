#pragma once
// Inputs for an emulated run: reproducible random data shaped by the graph's declared inputs, or tensors read from
// files (ONNX test-data .pb). Graph inputs that are initializers are not fed.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace kiln {

// The graph inputs a caller feeds: those without an initializer, in order.
std::vector<const Value*> fedInputs(const Graph& g);

// One tensor per graph input (invalid for initializer-backed inputs). Floats uniform in [-1, 1); integers in
// [0, intRange) (indices and token ids stay in range for small vocabularies); bools fair coins. Symbolic dimensions
// take `dims[symbol]`, else 1. Throws std::runtime_error for an input whose rank or element type is unknown, or
// when all of them together pass maxTotalBytes (emulator.max_input_bytes; checked before any data is made).
std::vector<Tensor> randomInputs(const Graph& g, uint32_t seed, const std::map<std::string, int64_t>& dims = {},
                                 int64_t intRange = 2, int64_t maxTotalBytes = int64_t{4} << 30);

// An input_shape option value ("ids:1,128;mask:1,128") fixing every symbolic input dim (each symbol from `dims`,
// else 1); `bound` receives the bindings used ("batch=1, sequence=128"). Empty when every input is static.
std::string inputShapeSpec(const Graph& g, const std::map<std::string, int64_t>& dims, std::string* bound = nullptr);

// The inputs of `to` taken by name from `from`'s inputs and their tensors (a compiled graph keeps the input names
// of the original; inputs it turned into constants get their constant). Throws std::runtime_error for an input of
// `to` that has neither.
std::vector<Tensor> inputsByName(const Graph& from, const std::vector<Tensor>& tensors, const Graph& to);

// input_<i>.pb (i counting fed inputs) from `dir`; a tensor file naming a graph input goes to that input instead.
// Throws LoadError for a missing or bad file.
std::vector<Tensor> readInputFiles(const Graph& g, const std::string& dir);

// The fed inputs from named arrays (a .npz archive `file`, array names = input names). Throws LoadError naming the
// file and the input without an array.
std::vector<Tensor> inputsFromArrays(const Graph& g, const std::vector<std::pair<std::string, Tensor>>& arrays,
                                     const std::string& file);

}  // namespace kiln
