#pragma once
// Tensor shapes with static and symbolic dimensions. A dimension is either a known extent (>= 0), a named symbol
// ("batch", "seq") or unknown. A shape may also have unknown rank.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

struct Dim {
  int64_t value = -1;  // >= 0 when static
  std::string symbol;  // set when symbolic; empty with value < 0 means unknown

  static Dim fixed(int64_t v) { return Dim{v, {}}; }
  static Dim symbolic(std::string s) { return Dim{-1, std::move(s)}; }
  static Dim unknown() { return Dim{}; }
  bool isStatic() const { return value >= 0; }
  bool isSymbolic() const { return value < 0 && !symbol.empty(); }
  bool operator==(const Dim&) const = default;
  std::string toString() const;  // "224", "batch" or "?"
};

class Shape {
 public:
  Shape() = default;  // rank 0 (scalar)
  explicit Shape(std::vector<Dim> dims) : dims_(std::move(dims)) {}
  static Shape ofStatic(const std::vector<int64_t>& extents);
  static Shape unknownRank();

  bool rankKnown() const { return rankKnown_; }
  size_t rank() const { return dims_.size(); }
  const std::vector<Dim>& dims() const { return dims_; }
  std::vector<Dim>& dims() { return dims_; }
  const Dim& operator[](size_t i) const { return dims_[i]; }
  bool isStatic() const;  // known rank and every dim static
  // Static extents; nullopt unless isStatic().
  std::optional<std::vector<int64_t>> staticExtents() const;
  // Element count; nullopt when not static or when the product overflows int64.
  std::optional<int64_t> numel() const;
  std::string toString() const;  // "1×3×224×224", "batch×128", "scalar", "?"
  bool operator==(const Shape&) const = default;

 private:
  std::vector<Dim> dims_;
  bool rankKnown_ = true;
};

// Product of extents with overflow detection; nullopt on overflow or a negative extent.
std::optional<int64_t> checkedProduct(const std::vector<int64_t>& extents);
// a*b with overflow detection.
std::optional<int64_t> checkedMul(int64_t a, int64_t b);

}  // namespace kiln
