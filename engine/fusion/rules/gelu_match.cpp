#include "fusion/rules/gelu_match.h"

#include <cmath>
#include <numbers>

#include "fusion/pattern.h"
#include "ir/graph.h"

namespace kiln {
namespace {

using namespace pattern;

// Exporters round these constants differently (1.4142, 1.4142135, 0.70710677...): 1e-4 relative tells them apart
// from anything else.
constexpr double kTol = 1e-4;

// The three factors x, 0.5 and `inner` under two Muls, in each association (commutativity covers the orders).
std::vector<Op> productOfThree(const Operand& inner) {
  const Operand x = any("x");
  const Operand half = scalar(0.5, kTol);
  return {
      op("Mul", {from(op("Mul", {x, inner}).commutative()), half}).commutative(),
      op("Mul", {from(op("Mul", {x, half}).commutative()), inner}).commutative(),
      op("Mul", {x, from(op("Mul", {inner, half}).commutative())}).commutative(),
  };
}

std::vector<Op> erfForms() {
  const Operand x = any("x");
  const Operand scaled = fromAny(
      {op("Div", {x, scalar(std::sqrt(2.0), kTol)}), op("Mul", {x, scalar(1.0 / std::sqrt(2.0), kTol)}).commutative()});
  return productOfThree(from(op("Add", {from(op("Erf", {scaled})), scalar(1.0, kTol)}).commutative()));
}

std::vector<Op> tanhForms() {
  const Operand x = any("x");
  const Operand c1 = scalar(0.044715, kTol);
  const Operand sqrt2OverPi = scalar(std::sqrt(2.0 / std::numbers::pi), kTol);
  // √(2/π) · (x + 0.044715 · x³)   (x³ as Pow(x, 3) or x·(x·x))
  const Operand cube =
      fromAny({op("Pow", {x, scalar(3.0, kTol)}), op("Mul", {x, from(op("Mul", {x, x}))}).commutative()});
  const Operand poly = from(op("Add", {x, from(op("Mul", {cube, c1}).commutative())}).commutative());
  // Factored: (√(2/π) · x) · (1 + 0.044715 · x²)   (x² scaled as x·(x·c) or (x·x)·c)
  const Operand scaledSquare = fromAny({op("Mul", {x, from(op("Mul", {x, c1}).commutative())}).commutative(),
                                        op("Mul", {from(op("Mul", {x, x})), c1}).commutative()});
  const Operand factor = from(op("Add", {scaledSquare, scalar(1.0, kTol)}).commutative());
  const Operand arg = fromAny({op("Mul", {poly, sqrt2OverPi}).commutative(),
                               op("Mul", {from(op("Mul", {x, sqrt2OverPi}).commutative()), factor}).commutative()});
  return productOfThree(from(op("Add", {from(op("Tanh", {arg})), scalar(1.0, kTol)}).commutative()));
}

}  // namespace

std::optional<GeluMatch> matchWrittenOutGelu(Node& anchor) {
  static const std::vector<Op> kErf = erfForms();
  static const std::vector<Op> kTanh = tanhForms();
  for (const auto* forms : {&kErf, &kTanh})
    for (const Op& p : *forms)
      if (auto m = match(p, anchor)) return GeluMatch{m->value("x"), m->nodes(), forms == &kTanh};
  return std::nullopt;
}

}  // namespace kiln
