// Trigonometric and hyperbolic functions and their inverses, element-wise on floats (fp16/bf16 compute in float).
#include <cmath>

#include "kernels/kernel_util.h"

namespace kiln::kernels {
namespace {

#define KILN_FLOAT_UNARY(name, expr)                                        \
  std::vector<Tensor> name(const KernelContext& c) {                        \
    return unary<kFloats>(c, [](auto x) { return expr; });                  \
  }

KILN_FLOAT_UNARY(sin, std::sin(x))
KILN_FLOAT_UNARY(cos, std::cos(x))
KILN_FLOAT_UNARY(tan, std::tan(x))
KILN_FLOAT_UNARY(asin, std::asin(x))
KILN_FLOAT_UNARY(acos, std::acos(x))
KILN_FLOAT_UNARY(atan, std::atan(x))
KILN_FLOAT_UNARY(sinh, std::sinh(x))
KILN_FLOAT_UNARY(cosh, std::cosh(x))
KILN_FLOAT_UNARY(asinh, std::asinh(x))
KILN_FLOAT_UNARY(acosh, std::acosh(x))
KILN_FLOAT_UNARY(atanh, std::atanh(x))
#undef KILN_FLOAT_UNARY

}  // namespace

void registerTrigonometryKernels(KernelRegistry& r) {
  r.add("Sin", sin);
  r.add("Cos", cos);
  r.add("Tan", tan);
  r.add("Asin", asin);
  r.add("Acos", acos);
  r.add("Atan", atan);
  r.add("Sinh", sinh);
  r.add("Cosh", cosh);
  r.add("Asinh", asinh);
  r.add("Acosh", acosh);
  r.add("Atanh", atanh);
}

}  // namespace kiln::kernels
