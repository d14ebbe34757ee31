#pragma once
// Elementary functions over arrays of floats, in loops the compiler vectorises: glibc's expf is one call per element
// (and a slow path that sets errno for every underflow, which masked attention scores hit all the time), which made
// the exponentials of a Softmax most of a small transformer's run.
#include <cstddef>

namespace kiln::kernels {

// out[i] = e^in[i] for i < n (in and out may be the same array). Computed in float (a polynomial after reducing by a
// multiple of ln 2), within one ulp of glibc's expf for every float (tested on a sweep of the float patterns).
// Overflow gives +inf, underflow 0 (or the subnormal), NaN stays NaN.
void expFloats(const float* in, float* out, size_t n);

}  // namespace kiln::kernels
