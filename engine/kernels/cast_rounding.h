#pragma once
// Rounding double results into fp16 exactly as Cast and convertTensor do (kernels/cast.cpp): to float with round to
// odd (a sticky last bit keeps which side of a tie the value was on), then to the nearest fp16. For kernels that
// compute in double and store fp16 a row at a time instead of through a whole tensor of doubles.
#include <cstddef>
#include <cstdint>

namespace kiln::kernels {

void roundDoublesToHalves(const double* in, uint16_t* out, size_t n);

}  // namespace kiln::kernels
