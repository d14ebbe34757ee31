#include "ir/opdefs/infer_util.h"

#include <algorithm>
#include <stdexcept>

#include "ir/graph.h"
#include "ir/tensor.h"

namespace kiln {

Dim broadcastDim(const Dim& a, const Dim& b) {
  if (a == b) return a;
  if (a.isStatic() && a.value == 1) return b;
  if (b.isStatic() && b.value == 1) return a;
  if (a.isStatic() && b.isStatic())
    throw std::runtime_error("dims " + a.toString() + " and " + b.toString() + " do not broadcast");
  return Dim::unknown();
}

Shape broadcastShapes(const Shape& a, const Shape& b) {
  if (!a.rankKnown() || !b.rankKnown()) return Shape::unknownRank();
  const size_t rank = std::max(a.rank(), b.rank());
  std::vector<Dim> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const Dim one = Dim::fixed(1);
    const Dim& da = i + a.rank() >= rank ? a[i + a.rank() - rank] : one;
    const Dim& db = i + b.rank() >= rank ? b[i + b.rank() - rank] : one;
    out[i] = broadcastDim(da, db);
  }
  return Shape(std::move(out));
}

void requireIO(const Node& n, size_t inputs) {
  for (size_t i = 0; i < inputs; ++i)
    if (!n.input(i)) throw std::runtime_error(n.opType() + " needs input " + std::to_string(i));
  if (!n.output(0)) throw std::runtime_error(n.opType() + " needs an output");
}

const Tensor* knownConstant(const Value* v) {
  if (!v) return nullptr;
  if (const Tensor* t = v->constant()) return t;
  const Node* p = v->producer();
  if (!p || p->opType() != "Constant" || !p->domain().empty()) return nullptr;
  const Attribute* a = p->attr("value");
  return a ? a->get<Tensor>() : nullptr;
}

std::optional<std::vector<int64_t>> constantInts(const Node& n, size_t i) {
  const Tensor* t = knownConstant(n.input(i));
  if (!t || !t->valid() || !isInteger(t->dtype())) return std::nullopt;
  return t->toInt64();
}

std::optional<std::vector<double>> constantReals(const Node& n, size_t i) {
  const Tensor* t = knownConstant(n.input(i));
  if (!t || !t->valid() || !(isInteger(t->dtype()) || isFloating(t->dtype()))) return std::nullopt;
  return t->toDouble();
}

Dim windowExtent(const Dim& d, int64_t kernel, int64_t stride, int64_t dilation, int64_t padBegin, int64_t padEnd,
                 const std::string& autoPad, bool ceilMode) {
  if (!d.isStatic() || kernel < 1 || stride < 1 || dilation < 1) return Dim::unknown();
  if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") return Dim::fixed((d.value + stride - 1) / stride);
  const int64_t pads = autoPad == "VALID" ? 0 : padBegin + padEnd;
  const int64_t span = d.value + pads - dilation * (kernel - 1) - 1;
  if (span < 0) throw std::runtime_error("window of " + std::to_string(kernel) + " wider than its padded input of " +
                                         std::to_string(d.value + pads));
  int64_t out = (ceilMode ? (span + stride - 1) / stride : span / stride) + 1;
  // A last window that would start inside the end padding is dropped.
  if (ceilMode && (out - 1) * stride >= d.value + (autoPad == "VALID" ? 0 : padBegin)) --out;
  return Dim::fixed(out);
}

int64_t normalizedAxis(int64_t axis, size_t rank, const std::string& what) {
  const auto r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r)
    throw std::runtime_error(what + " " + std::to_string(axis) + " is out of range for rank " + std::to_string(r));
  return axis < 0 ? axis + r : axis;
}

}  // namespace kiln
