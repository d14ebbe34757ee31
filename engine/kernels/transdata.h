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

}  // namespace kiln
