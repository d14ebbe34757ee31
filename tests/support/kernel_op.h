#pragma once
// Shared by the kernel tests: one node in its own graph, evaluated on the tensors given, and small tensor makers.
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/kernel.h"
#include "ir/graph.h"

namespace kiln::testing {

using Dims = std::vector<int64_t>;

class Op {
 public:
  explicit Op(const char* type, size_t outputs = 1, const char* domain = "") : graph_(std::make_shared<IdSource>()) {
    node_ = graph_.addNode(type, {}, outputs, type, domain);
  }
  template <typename T>
  Op& attr(const char* name, T value) {
    node_->setAttr(name, Attribute(std::move(value)));
    return *this;
  }
  Op& ints(const char* name, std::vector<int64_t> v) { return attr(name, std::move(v)); }
  Op& floats(const char* name, std::vector<float> v) { return attr(name, std::move(v)); }
  Op& strings(const char* name, std::vector<std::string> v) { return attr(name, std::move(v)); }
  Op& i(const char* name, int64_t v) { return attr(name, v); }
  Op& f(const char* name, float v) { return attr(name, v); }
  Op& s(const char* name, const char* v) { return attr(name, std::string(v)); }
  // The model opset the kernel sees, as a node annotation (the executors pass it in KernelLimits instead).
  Op& opset(int v) {
    node_->setAnnotation("opset", std::to_string(v));
    return *this;
  }
  Graph& graph() { return graph_; }
  std::vector<Tensor> run(const std::vector<Tensor>& in, KernelLimits limits = {}) const {
    std::vector<const Tensor*> ptrs;
    for (const Tensor& t : in) ptrs.push_back(t.valid() ? &t : nullptr);
    return evaluateNode(*node_, ptrs, limits);
  }
  // The first output; a kernel that declines is a logic_error (not the runtime_error of a malformed node, so a test
  // expecting the latter cannot pass on a decline).
  Tensor one(const std::vector<Tensor>& in) const {
    auto out = run(in);
    if (out.empty()) throw std::logic_error("kernel declined");
    return out[0];
  }

 private:
  Graph graph_;
  Node* node_;
};

inline Tensor f32(Dims dims, std::vector<float> v) { return Tensor::fromVector(DType::Float, std::move(dims), v); }
inline Tensor f64(Dims dims, std::vector<double> v) { return Tensor::fromVector(DType::Double, std::move(dims), v); }
inline Tensor i64(Dims dims, std::vector<int64_t> v) { return Tensor::fromVector(DType::Int64, std::move(dims), v); }
inline Tensor i32(Dims dims, std::vector<int32_t> v) { return Tensor::fromVector(DType::Int32, std::move(dims), v); }
inline Tensor i8(Dims dims, std::vector<int8_t> v) { return Tensor::fromVector(DType::Int8, std::move(dims), v); }
inline Tensor u8(Dims dims, std::vector<uint8_t> v) { return Tensor::fromVector(DType::UInt8, std::move(dims), v); }
inline Tensor boolean(Dims dims, std::vector<uint8_t> v) { return Tensor::fromVector(DType::Bool, std::move(dims), v); }
inline Tensor scalarI64(int64_t v) { return i64({}, {v}); }
inline Tensor none() { return Tensor(); }

template <typename T>
std::vector<T> values(const Tensor& t) {
  std::vector<T> out(static_cast<size_t>(t.numel()));
  if (!out.empty()) std::memcpy(out.data(), t.data(), out.size() * sizeof(T));
  return out;
}

}  // namespace kiln::testing
