#pragma once
// How far one tensor is from another: the numbers `kiln run`, `kiln verify` and the conformance runner report.
#include <cstdint>
#include <string>

#include "ir/tensor.h"

namespace kiln {

struct Tolerance {
  // The ONNX backend suite's own criterion (numpy assert_allclose defaults of its runner): |got - want| <=
  // atol + rtol * |want|, NaN equal to NaN.
  double rtol = 1e-3;
  double atol = 1e-7;
};

struct TensorDifference {
  bool comparable = true;  // same element type and shape
  double maxAbs = 0;       // largest |got - want|
  double maxRel = 0;       // largest |got - want| / |want| over elements where want != 0
  double cosine = 1;       // cosine similarity of the two as vectors (1 when both are zero; 0 when one side has a
                           // NaN or infinity where the other is finite)
  int64_t mismatches = 0;  // elements outside the tolerance (or differing, for integers and bools)
  bool oneSidedNonFinite = false;  // some element is NaN or infinite on one side only
  std::string firstNonFinite;      // the first such: "element 0: got -nan, expected 0.001"
  std::string firstMismatch;  // "element 17: got 0.5, expected 0.25", or the type/shape difference
  bool within() const { return comparable && mismatches == 0; }
};

TensorDifference compareTensors(const Tensor& got, const Tensor& want, const Tolerance& tolerance = {});

// Tolerance for an element type: the suite's criterion for fp32/fp64, a few units in the last place for the 16-bit
// formats (whose every op rounds).
Tolerance toleranceFor(DType t);

// rtol relative to the tensor's scale: |got - want| <= rtol * (|want| + max |want|). Two float evaluation orders of
// a deep network differ by a few ulps of the LARGEST values they carried, so an element near zero cannot be held to
// its own magnitude; this is how the compiled and reference runs of one model are compared.
Tolerance scaledTolerance(const Tensor& want, double rtol);

}  // namespace kiln
