// DFT (17 with `axis` as an attribute, 20 with dft_length and axis as inputs): the discrete Fourier transform of
// X [..., signal..., 1 (real) or 2 (complex)] along one signal axis, in double; `inverse` conjugates the twiddles
// and divides by n; `onesided` keeps the first n/2 + 1 frequencies. dft_length zero-pads or truncates the signal.
// A direct O(n²) sum: the emulator's reference, not a fast path.
#include <cmath>
#include <numbers>

#include "ir/graph.h"
#include "kernels/kernel_util.h"
#include "kernels/nn_kernels.h"

namespace kiln::kernels {
namespace {

std::vector<Tensor> dft(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  const auto rank = static_cast<int64_t>(x.dims().size());
  if (rank < 2 || (x.dims().back() != 1 && x.dims().back() != 2))
    ctx.fail("input must end in an axis of 1 (real) or 2 (complex)");
  int64_t axis = ctx.node().attrInt("axis", ctx.limits().opset >= 20 ? -2 : 1);
  if (const Tensor* a = ctx.input(2)) {
    const std::vector<int64_t> v = intValues(ctx, *a, "axis");
    if (v.size() != 1) ctx.fail("axis must be a scalar");
    axis = v[0];
  }
  axis = normalizeAxis(ctx, axis, rank, "axis");
  if (axis == rank - 1) ctx.fail("axis cannot be the real/imaginary axis");
  const int64_t in = x.dims()[static_cast<size_t>(axis)];
  int64_t n = in;
  if (const Tensor* l = ctx.input(1)) {
    const std::vector<int64_t> v = intValues(ctx, *l, "dft_length");
    if (v.size() != 1 || v[0] < 1) ctx.fail("dft_length must be a positive scalar");
    n = v[0];
  }
  const bool inverse = ctx.node().attrInt("inverse", 0) != 0, onesided = ctx.node().attrInt("onesided", 0) != 0;
  const int64_t outLen = onesided ? n / 2 + 1 : n;
  const bool complexIn = x.dims().back() == 2;
  std::vector<int64_t> dims = x.dims();
  dims[static_cast<size_t>(axis)] = outLen;
  dims.back() = 2;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.dims()[static_cast<size_t>(d)];
  for (int64_t d = axis + 1; d < rank - 1; ++d) inner *= x.dims()[static_cast<size_t>(d)];
  std::vector<Tensor> out;
  dispatch<kFloats>(x.dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    const std::vector<double> v = nn::loadAll<S, double>(ctx, x);
    checkScratch(ctx, outer * outLen * inner * 2, sizeof(double));
    std::vector<double> y(static_cast<size_t>(outer * outLen * inner * 2));
    const int64_t width = complexIn ? 2 : 1;
    const double sign = inverse ? 1.0 : -1.0;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i)
        for (int64_t k = 0; k < outLen; ++k) {
          double re = 0, im = 0;
          for (int64_t t = 0; t < std::min(n, in); ++t) {
            const size_t at = static_cast<size_t>(((o * in + t) * inner + i) * width);
            const double a = v[at], b = complexIn ? v[at + 1] : 0.0;
            const double angle = sign * 2 * std::numbers::pi * static_cast<double>(k * t % n) / static_cast<double>(n);
            re += a * std::cos(angle) - b * std::sin(angle);
            im += a * std::sin(angle) + b * std::cos(angle);
          }
          if (inverse) {
            re /= static_cast<double>(n);
            im /= static_cast<double>(n);
          }
          const size_t at = static_cast<size_t>(((o * outLen + k) * inner + i) * 2);
          y[at] = re;
          y[at + 1] = im;
        }
    out.push_back(nn::storeAll<S>(ctx, dims, y));
  });
  return out;
}

}  // namespace

void registerDftKernels(KernelRegistry& r) { r.add("DFT", dft); }

}  // namespace kiln::kernels
