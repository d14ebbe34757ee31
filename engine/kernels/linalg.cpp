// Det: determinants of the trailing square matrices of a [..., M, M] float tensor, by LU decomposition with partial
// pivoting in double (one rounding to the element type at the end).
#include <cmath>
#include <utility>

#include "kernels/kernel_util.h"

namespace kiln::kernels {
namespace {

double determinant(std::vector<double>& a, int64_t m) {
  double det = 1.0;
  const auto at = [&](int64_t r, int64_t c) -> double& { return a[static_cast<size_t>(r * m + c)]; };
  for (int64_t k = 0; k < m; ++k) {
    int64_t pivot = k;
    for (int64_t r = k + 1; r < m; ++r)
      if (std::fabs(at(r, k)) > std::fabs(at(pivot, k))) pivot = r;
    if (at(pivot, k) == 0.0) return 0.0;  // singular (or every candidate is NaN, which the sum below would carry)
    if (pivot != k) {
      for (int64_t c = 0; c < m; ++c) std::swap(at(k, c), at(pivot, c));
      det = -det;
    }
    det *= at(k, k);
    for (int64_t r = k + 1; r < m; ++r) {
      const double f = at(r, k) / at(k, k);
      for (int64_t c = k; c < m; ++c) at(r, c) -= f * at(k, c);
    }
  }
  return det;
}

std::vector<Tensor> det(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  const size_t rank = x.dims().size();
  if (rank < 2 || x.dims()[rank - 1] != x.dims()[rank - 2]) ctx.fail("input must be [..., M, M]");
  const int64_t m = x.dims()[rank - 1];
  std::vector<Tensor> out;
  dispatch<kFloats>(x.dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    using C = ComputeOf<S>;
    OutBuffer o(ctx, x.dtype(), std::vector<int64_t>(x.dims().begin(), x.dims().end() - 2));
    if (o.numel() == 0) {  // no matrices: m * m may not even be representable
      out.push_back(o.finish());
      return;
    }
    checkScratch(ctx, m * m, sizeof(double));  // m * m is at most x's element count here
    std::vector<double> a(static_cast<size_t>(m * m));
    for (int64_t b = 0; b < o.numel(); ++b) {
      for (int64_t i = 0; i < m * m; ++i)
        a[static_cast<size_t>(i)] = static_cast<double>(Elem<S>::load(x.data(), b * m * m + i));
      Elem<S>::store(o.data(), b, static_cast<C>(determinant(a, m)));
    }
    out.push_back(o.finish());
  });
  return out;
}

}  // namespace

void registerLinalgKernels(KernelRegistry& r) { r.add("Det", det); }

}  // namespace kiln::kernels
