#pragma once
// NumPy archives: a .npz is a zip of .npy arrays (stored or deflated), the way tract, PyTorch and ONNX Runtime
// test suites ship a model's inputs and expected outputs together. Untrusted: every offset, size and count is checked
// against the file and `maxBytes` before anything is allocated; a bad file is a LoadError naming it and the problem.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ir/tensor.h"

namespace kiln {

// The archive's arrays in file order, named without the ".npy" suffix. Little-endian or byte-sized bool, integer
// and float arrays in C order; ZIP64, encrypted, Fortran-order, big-endian and object arrays are refused.
std::vector<std::pair<std::string, Tensor>> readNpz(const std::string& path, int64_t maxBytes = int64_t{1} << 30);

// One .npy array held in `bytes` (`what` names it in errors).
Tensor parseNpy(const std::string& bytes, const std::string& file, const std::string& what);

}  // namespace kiln
