#pragma once
// Reference CPU kernels: the functional meaning of an op, evaluated on whole tensors. Constant folding uses them to
// compute constant subgraphs at compile time; the NPU emulator's functional mode runs the same kernels, so a folded
// constant and an emulated run agree by construction.
//
// Kernels are plain functions registered per op type (one source file per op family). Contract:
//  - an op or element type the library does not implement returns an empty vector: the caller leaves the node as it
//    is (never an exception for a well-formed node);
//  - a malformed node (bad attribute, index out of range, shapes that do not broadcast) throws std::runtime_error
//    naming the node and the reason;
//  - an output above KernelLimits::maxOutputBytes throws KernelOutputTooLarge before anything is allocated, so a
//    small constant that expands into gigabytes is refused rather than materialised.
#include <cstdint>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/low_bit_types.h"
#include "ir/tensor.h"

namespace kiln {

class Node;

struct KernelLimits {
  // Largest single output a kernel may allocate.
  int64_t maxOutputBytes = int64_t{4} << 30;
  // Not a limit but the other fact a caller holding the model knows: its ai.onnx opset, for ops whose meaning
  // changed between versions (Softmax's axis before 13). 0 = unknown.
  int64_t opset = 0;
};

class KernelOutputTooLarge : public std::runtime_error {
 public:
  KernelOutputTooLarge(const std::string& what, int64_t bytes) : std::runtime_error(what), bytes_(bytes) {}
  // Bytes the output would have needed (INT64_MAX when the size overflows).
  int64_t bytes() const { return bytes_; }

 private:
  int64_t bytes_;
};

// What a kernel sees: the node (for attributes and its output count), its inputs and the limits.
class KernelContext {
 public:
  KernelContext(const Node& node, const std::vector<const Tensor*>& inputs, const KernelLimits& limits)
      : node_(node), inputs_(inputs), limits_(limits) {}
  const Node& node() const { return node_; }
  const KernelLimits& limits() const { return limits_; }
  size_t numInputs() const { return inputs_.size(); }
  // Null when the optional input is omitted.
  const Tensor* input(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }
  // Throws (malformed node) when the input is missing.
  const Tensor& required(size_t i) const;
  // Throws std::runtime_error "Op 'node name': why".
  [[noreturn]] void fail(const std::string& why) const;

 private:
  const Node& node_;
  const std::vector<const Tensor*>& inputs_;
  const KernelLimits& limits_;
};

using KernelFn = std::vector<Tensor> (*)(const KernelContext&);

class KernelRegistry {
 public:
  // The built-in kernels (every family registered once, on first use).
  static KernelRegistry& global();
  void add(const std::string& opType, KernelFn fn, const std::string& domain = {});
  // A kernel that handles string tensors itself (Cast); every other kernel is never handed one.
  void addStringAware(const std::string& opType, KernelFn fn, const std::string& domain = {});
  bool readsStrings(const std::string& domain, const std::string& opType) const;
  // Null when no kernel implements domain:opType.
  KernelFn find(const std::string& domain, const std::string& opType) const;
  std::vector<std::string> opTypes() const;  // "Add", "com.x:Op", ... sorted, for reports and tests

 private:
  struct Entry {
    KernelFn fn = nullptr;
    bool readsStrings = false;
  };
  // Looked up once per node a run evaluates: hashed by domain, then op type, without building a key (an ordered map
  // of string pairs cost a small transformer's run more than some of its kernels).
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  template <typename V>
  using ByName = std::unordered_map<std::string, V, StringHash, std::equal_to<>>;
  const Entry* entry(const std::string& domain, const std::string& opType) const;
  ByName<ByName<Entry>> kernels_;
};

// Evaluates one node on concrete inputs (inputs[i] null for an omitted optional input). Returns one tensor per node
// output, or an empty vector when the op or an element type is not implemented.
std::vector<Tensor> evaluateNode(const Node& node, const std::vector<const Tensor*>& inputs);
std::vector<Tensor> evaluateNode(const Node& node, const std::vector<const Tensor*>& inputs,
                                 const KernelLimits& limits);
bool hasKernel(const Node& node);

// Element type conversion with Cast's rules (real rounding to fp16/bf16, saturating float -> int, wrapping int -> int).
// Returns an invalid Tensor when a type is not supported; throws KernelOutputTooLarge above the limit.
Tensor convertTensor(const Tensor& x, DType to, int64_t maxOutputBytes = KernelLimits{}.maxOutputBytes);
// The same with Cast-19's saturate: false lets a float8 target take NaN / infinity for values out of its range.
// Cast-24's round_mode picks how a value lands on float8e8m0's powers of two.
Tensor castTensor(const Tensor& x, DType to, bool saturate, int64_t maxOutputBytes = KernelLimits{}.maxOutputBytes,
                  E8M0Round round = E8M0Round::Up);

}  // namespace kiln
