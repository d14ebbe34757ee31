#include "emulator/control_flow_data.h"

#include <cstring>
#include <stdexcept>

#include "kernels/kernel.h"
#include "ir/graph.h"

namespace kiln::flowdata {

namespace {

[[noreturn]] void fail(const std::string& what, const std::string& why) { throw std::runtime_error(what + ": " + why); }

int64_t product(const std::vector<int64_t>& dims, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= dims[i];
  return p;
}

// Byte layout of `dims` around `axis`: `outer` blocks before it, `inner` bytes after it.
struct AxisSplit {
  int64_t outer, inner;
};
AxisSplit splitAt(const std::vector<int64_t>& dims, size_t axis, DType dtype) {
  return {product(dims, 0, axis), product(dims, axis, dims.size()) * dtypeSize(dtype)};
}

}  // namespace

bool scalarTruth(const std::string& what, const Tensor* t) {
  if (!t) fail(what, "missing");
  if (t->numel() != 1 || t->dtype() == DType::String) fail(what, "must be a single number or bool");
  if (t->dtype() == DType::Bool) return t->data()[0] != 0;
  const std::vector<double> v = t->toDouble();
  if (v.empty()) fail(what, "unsupported element type");
  return v[0] != 0;
}

int64_t scalarInt(const std::string& what, const Tensor& t) {
  if (t.numel() != 1) fail(what, "must be a single integer");
  const std::vector<int64_t> v = t.toInt64();
  if (v.empty()) fail(what, "must be an integer");
  return v[0];
}

Tensor int64Scalar(int64_t v) { return Tensor::fromVector(DType::Int64, {}, std::vector<int64_t>{v}); }
Tensor boolScalar(bool v) { return Tensor::fromBytes(DType::Bool, {}, std::string(1, v ? '\1' : '\0')); }

Tensor sliceAt(const std::string& what, const Tensor& t, int64_t axis, int64_t index) {
  const auto& dims = t.dims();
  if (t.dtype() == DType::String || dtypeSize(t.dtype()) <= 0) fail(what, "cannot slice this element type");
  if (axis < 0 || static_cast<size_t>(axis) >= dims.size()) fail(what, "scan axis out of range");
  const int64_t len = dims[static_cast<size_t>(axis)];
  if (index < 0 || index >= len) fail(what, "slice index out of range");
  std::vector<int64_t> outDims = dims;
  outDims.erase(outDims.begin() + axis);
  const int64_t outer = product(dims, 0, static_cast<size_t>(axis));
  const int64_t inner = product(dims, static_cast<size_t>(axis) + 1, dims.size()) * dtypeSize(t.dtype());
  std::string bytes(static_cast<size_t>(outer * inner), '\0');
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(bytes.data() + o * inner, t.data() + (o * len + index) * inner, static_cast<size_t>(inner));
  return Tensor::fromBytes(t.dtype(), std::move(outDims), std::move(bytes));
}

Tensor stack(const std::string& what, const std::vector<Tensor>& parts, int64_t axis, const ValueType& declared) {
  if (parts.empty()) {
    const DType dtype = declared.isTensor() ? declared.dtype : DType::Undefined;
    if (dtype == DType::Undefined || dtype == DType::String) fail(what, "no iterations and no declared output type");
    std::vector<int64_t> dims = declared.shape.staticExtents().value_or(std::vector<int64_t>{});
    if (axis < 0 || static_cast<size_t>(axis) > dims.size()) axis = 0;
    dims.insert(dims.begin() + axis, 0);
    return Tensor::fromBytes(dtype, std::move(dims), {});
  }
  const Tensor& first = parts.front();
  if (first.dtype() == DType::String || dtypeSize(first.dtype()) <= 0) fail(what, "cannot stack this element type");
  for (const Tensor& p : parts)
    if (p.dtype() != first.dtype() || p.dims() != first.dims())
      fail(what, "iterations produced differently shaped outputs");
  if (axis < 0 || static_cast<size_t>(axis) > first.dims().size()) fail(what, "output axis out of range");
  const AxisSplit s = splitAt(first.dims(), static_cast<size_t>(axis), first.dtype());
  std::vector<int64_t> dims = first.dims();
  dims.insert(dims.begin() + axis, static_cast<int64_t>(parts.size()));
  std::string bytes(static_cast<size_t>(s.outer * s.inner) * parts.size(), '\0');
  char* out = bytes.data();
  for (int64_t o = 0; o < s.outer; ++o)
    for (const Tensor& p : parts) {
      std::memcpy(out, p.data() + o * s.inner, static_cast<size_t>(s.inner));
      out += s.inner;
    }
  return Tensor::fromBytes(first.dtype(), std::move(dims), std::move(bytes));
}

void StackBudget::add(const Tensor& t) {
  used_ += static_cast<int64_t>(t.byteSize());
  if (used_ > limit_)
    throw KernelOutputTooLarge(what_ + ": scan outputs exceed " + std::to_string(limit_) + " bytes", used_);
}

ScanAxes::ScanAxes(const std::string& what, const Node& n, const std::vector<const Tensor*>& in, size_t stateCount,
                   size_t scanOutputs) {
  const size_t scanInputs = in.size() - stateCount;
  auto list = [&](const char* name, size_t count) {
    std::vector<int64_t> v = n.attrInts(name);
    if (v.empty()) v.assign(count, 0);
    if (v.size() != count) fail(what, std::string(name) + " has the wrong length");
    return v;
  };
  const std::vector<int64_t> inAxes = list("scan_input_axes", scanInputs);
  const std::vector<int64_t> inDirs = list("scan_input_directions", scanInputs);
  const std::vector<int64_t> outAxes = list("scan_output_axes", scanOutputs);
  const std::vector<int64_t> outDirs = list("scan_output_directions", scanOutputs);
  for (size_t j = 0; j < scanInputs; ++j) {
    const Tensor& t = *in[stateCount + j];
    const auto rank = static_cast<int64_t>(t.dims().size());
    int64_t a = inAxes[j] < 0 ? inAxes[j] + rank : inAxes[j];
    if (a < 0 || a >= rank) fail(what, "scan_input_axes out of range");
    const int64_t len = t.dims()[static_cast<size_t>(a)];
    if (j == 0) length = len;
    if (len != length) fail(what, "scan inputs differ in length");
    inputAxis.push_back(a);
    inputReversed.push_back(inDirs[j] != 0);
  }
  for (size_t k = 0; k < scanOutputs; ++k) {
    // Negative output axes count from the end of the stacked result; the slice rank is not known yet, so only
    // non-negative axes are accepted here (what exporters write).
    if (outAxes[k] < 0) fail(what, "negative scan_output_axes are not supported");
    outputAxis.push_back(outAxes[k]);
    outputReversed.push_back(outDirs[k] != 0);
  }
}

}  // namespace kiln::flowdata
