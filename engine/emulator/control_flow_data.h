#pragma once
// Tensor plumbing the control-flow ops need (internal to the emulator): scalar conditions and trip counts, one slice
// along an axis (Scan's per-step input), and stacking per-iteration results along an axis (Loop's and Scan's scan
// outputs). Every size is checked; a body that produces differently shaped slices is a malformed model.
#include <cstdint>
#include <string>
#include <vector>

#include "ir/tensor.h"
#include "ir/value_type.h"

namespace kiln {
class Node;
}

namespace kiln::flowdata {

// A one-element tensor as a condition (bool, or any numeric type: non-zero is true); throws naming `what`.
bool scalarTruth(const std::string& what, const Tensor* t);
int64_t scalarInt(const std::string& what, const Tensor& t);
Tensor int64Scalar(int64_t v);
Tensor boolScalar(bool v);

// Element `index` along `axis`: the tensor with that axis removed.
Tensor sliceAt(const std::string& what, const Tensor& t, int64_t axis, int64_t index);
// The parts (equal dtype and dims) stacked along a new `axis`. With no parts, the declared type of the body output
// gives the element type and, when static, the slice shape of the empty result.
Tensor stack(const std::string& what, const std::vector<Tensor>& parts, int64_t axis, const ValueType& declared);

// Accumulated bytes of the slices a loop keeps, refused above the kernel output limit before they pile up.
class StackBudget {
 public:
  StackBudget(std::string what, int64_t limit) : what_(std::move(what)), limit_(limit) {}
  void add(const Tensor& t);

 private:
  std::string what_;
  int64_t limit_;
  int64_t used_ = 0;
};

// Scan's axis and direction attributes, validated against the inputs; `length` is the common scanned extent.
struct ScanAxes {
  ScanAxes(const std::string& what, const Node& n, const std::vector<const Tensor*>& in, size_t stateCount,
           size_t scanOutputs);
  std::vector<int64_t> inputAxis, outputAxis;
  std::vector<bool> inputReversed, outputReversed;
  int64_t length = 0;
};

}  // namespace kiln::flowdata
