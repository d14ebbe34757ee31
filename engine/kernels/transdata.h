#pragma once
// Layout conversion of concrete tensors: the reference kernel of kiln:TransData, also used offline to store constant
// weights in the layout their consumer reads (a FRACTAL_Z convolution weight, a FRACTAL_NZ matrix).
#include <cstdint>
#include <vector>

#include "ir/format.h"
#include "ir/tensor.h"

namespace kiln {

// x stored in `src` -> the same elements stored in `dst`. `origin` gives the logical (NCHW / ND) extents when `src`
// is blocked (-1 entries are read from x's dims where the layout keeps them); ignored otherwise. Padding lanes of a
// blocked result are zero. Returns an invalid Tensor when a layout does not apply (rank, format) or the result would
// exceed `maxOutputBytes`.
Tensor transDataTensor(const Tensor& x, Format src, Format dst, const std::vector<int64_t>& origin = {},
                       int64_t maxOutputBytes = int64_t{4} << 30);

// x with its axes reordered: result axis i is x's axis perm[i] (a transpose, elements copied). Returns an invalid
// Tensor when perm is not a permutation of x's axes, x holds strings, or the result would exceed `maxOutputBytes`.
Tensor permuteTensor(const Tensor& x, const std::vector<size_t>& perm, int64_t maxOutputBytes = int64_t{4} << 30);

}  // namespace kiln
