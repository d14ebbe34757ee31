#include "ir/shape.h"

namespace kiln {

std::string Dim::toString() const {
  if (isStatic()) return std::to_string(value);
  if (isSymbolic()) return symbol;
  return "?";
}

Shape Shape::ofStatic(const std::vector<int64_t>& extents) {
  Shape s;
  s.dims_.reserve(extents.size());
  for (int64_t e : extents) s.dims_.push_back(Dim::fixed(e));
  return s;
}

Shape Shape::unknownRank() {
  Shape s;
  s.rankKnown_ = false;
  return s;
}

bool Shape::isStatic() const {
  if (!rankKnown_) return false;
  for (const Dim& d : dims_)
    if (!d.isStatic()) return false;
  return true;
}

std::optional<std::vector<int64_t>> Shape::staticExtents() const {
  if (!isStatic()) return std::nullopt;
  std::vector<int64_t> out;
  out.reserve(dims_.size());
  for (const Dim& d : dims_) out.push_back(d.value);
  return out;
}

std::optional<int64_t> Shape::numel() const {
  auto e = staticExtents();
  if (!e) return std::nullopt;
  return checkedProduct(*e);
}

std::string Shape::toString() const {
  if (!rankKnown_) return "?";
  if (dims_.empty()) return "scalar";
  std::string out;
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i) out += "×";
    out += dims_[i].toString();
  }
  return out;
}

std::optional<int64_t> checkedMul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

std::optional<int64_t> checkedProduct(const std::vector<int64_t>& extents) {
  int64_t p = 1;
  for (int64_t e : extents) {
    auto r = checkedMul(p, e);
    if (!r) return std::nullopt;
    p = *r;
  }
  return p;
}

}  // namespace kiln
