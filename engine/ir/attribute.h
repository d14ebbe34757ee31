#pragma once
// Node attributes. Graph-valued attributes (If/Loop/Scan bodies) hold their subgraph by shared_ptr so an Attribute
// stays copyable; the owning node is the only holder in practice.
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "ir/tensor.h"
#include "ir/value_type.h"

namespace kiln {

class Graph;

class Attribute {
 public:
  enum class Kind : uint8_t { Float, Int, String, Tensor, Graph, Floats, Ints, Strings, Tensors, Graphs, Type, Types };
  using GraphPtr = std::shared_ptr<kiln::Graph>;
  using Storage = std::variant<float, int64_t, std::string, kiln::Tensor, GraphPtr, std::vector<float>,
                               std::vector<int64_t>, std::vector<std::string>, std::vector<kiln::Tensor>,
                               std::vector<GraphPtr>, ValueType, std::vector<ValueType>>;

  Attribute() = default;
  explicit Attribute(Storage v) : v_(std::move(v)) {}

  Kind kind() const { return static_cast<Kind>(v_.index()); }
  template <typename T>
  const T* get() const { return std::get_if<T>(&v_); }
  template <typename T>
  T* get() { return std::get_if<T>(&v_); }
  const Storage& storage() const { return v_; }
  // Short display form for the inspector and diffs; long lists and tensors are summarised.
  std::string toString() const;
  // Structural equality (tensors by bytes, graphs by identity).
  bool operator==(const Attribute& o) const;

 private:
  Storage v_;
};

struct NamedAttribute {
  std::string name;
  Attribute value;
};

}  // namespace kiln
