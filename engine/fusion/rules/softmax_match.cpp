#include "fusion/rules/softmax_match.h"

#include <cmath>

#include "ir/graph.h"
#include "passes/constant_value.h"

namespace kiln {

std::optional<int64_t> softmaxRowAxis(const Node& softmax, int64_t opset) {
  const Value* x = softmax.input(0);
  if (softmax.opType() != "Softmax" || !softmax.domain().empty() || !x || !x->type().shape.rankKnown())
    return std::nullopt;
  const auto rank = static_cast<int64_t>(x->type().shape.rank());
  int64_t axis = softmax.attrInt("axis", opset >= 13 ? -1 : 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank || (opset >= 13 && axis != rank - 1)) return std::nullopt;
  return axis;
}

bool softmaxOverLastAxis(const Node& softmax, int64_t opset) {
  const auto axis = softmaxRowAxis(softmax, opset);
  return axis && *axis == static_cast<int64_t>(softmax.input(0)->type().shape.rank()) - 1;
}

bool provablySameDim(const Dim& a, const Dim& b) {
  if (a.isStatic()) return a.value == b.value;
  return a.isSymbolic() && b.isSymbolic() && a.symbol == b.symbol;
}

std::optional<double> floatScalarConstant(const Value* v) {
  const Tensor* t = constantValueOf(v);
  if (!t || v->isGraphInput() || t->numel() != 1 || !isFloating(t->dtype())) return std::nullopt;
  const double x = t->toDouble().at(0);
  if (!std::isfinite(x)) return std::nullopt;
  return x;
}

}  // namespace kiln
