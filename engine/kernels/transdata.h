#pragma once
// Layout conversion of concrete tensors: the reference kernel of kiln:TransData, also used offline to store constant
// weights in the layout their consumer reads (a FRACTAL_Z convolution weight, a FRACTAL_NZ matrix).
#include <cstdint>
#include <span>
#include <vector>

#include "ir/format.h"
#include "ir/tensor.h"

namespace kiln {
class Node;
}

namespace kiln {

// x stored in `src` -> the same elements stored in `dst`. `origin` gives the logical (NCHW / ND) extents when `src`
// is blocked (-1 entries are read from x's dims where the layout keeps them); ignored otherwise. Padding lanes of a
// blocked result are zero. Returns an invalid Tensor when a layout does not apply (rank, format) or the result would
// exceed `maxOutputBytes`.
Tensor transDataTensor(const Tensor& x, Format src, Format dst, const std::vector<int64_t>& origin = {},
                       int64_t maxOutputBytes = int64_t{4} << 30);
// The same conversion written into `into` (the compiled mode's arena block: exactly the result's bytes, not
// overlapping x): false, writing nothing, when the layouts do not apply or the sizes differ.
bool transDataInto(const Tensor& x, Format src, Format dst, const std::vector<int64_t>& origin, std::span<uint8_t> into);

// x with its axes reordered: result axis i is x's axis perm[i] (a transpose, elements copied). Returns an invalid
// Tensor when perm is not a permutation of x's axes, x holds strings, or the result would exceed `maxOutputBytes`.
Tensor permuteTensor(const Tensor& x, const std::vector<size_t>& perm, int64_t maxOutputBytes = int64_t{4} << 30);

namespace kernels {
// A kiln:TransData node's conversion of x written into `into` (transDataInto); false, writing nothing, for any other
// node or when it does not apply (the node's kernel then runs as usual and reports why).
bool transDataNodeInto(const Node& n, const Tensor& x, std::span<uint8_t> into);
}  // namespace kernels

}  // namespace kiln
