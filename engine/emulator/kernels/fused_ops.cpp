// Kiln's fused Vector ops (ir/opdefs/kiln_fused_ops.cpp): Gelu, LayerNorm, RmsNorm, AddLayerNorm, AddRmsNorm. They
// give the fusion rules a numeric check (the fused graph against the written-out one) and the emulator its
// functional meaning. Floating types only; computed in double and rounded once into the input's type.
#include <cmath>
#include <numbers>

#include "emulator/kernels/kernel_util.h"
#include "ir/graph.h"

namespace kiln::kernels {
namespace {

Tensor inTypeOf(const Tensor& like, const std::vector<double>& v) {
  return convertTensor(Tensor::fromVector(DType::Double, like.dims(), v), like.dtype());
}

std::vector<Tensor> gelu(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  if (!isFloating(x.dtype())) return {};
  const bool tanhForm = ctx.node().attrString("approximate", "none") == "tanh";
  std::vector<double> v = x.toDouble();
  if (const Tensor* b = ctx.input(1)) {
    // The bias runs along the last axis; X + B is rounded to X's type first, as the unfused Add would.
    const std::vector<double> bias = b->toDouble();
    if (bias.empty() || x.dims().empty() || int64_t(bias.size()) != x.dims().back()) return {};
    for (size_t i = 0; i < v.size(); ++i) v[i] += bias[i % bias.size()];
    v = inTypeOf(x, v).toDouble();
  }
  for (double& e : v)
    e = tanhForm ? 0.5 * e * (1 + std::tanh(std::sqrt(2 / std::numbers::pi) * (e + 0.044715 * e * e * e)))
                 : 0.5 * e * (1 + std::erf(e / std::sqrt(2.0)));
  return {inTypeOf(x, v)};
}

// A + B with B broadcast into A's shape (numpy, right-aligned); B may also be A's shape exactly.
std::vector<double> addInto(const KernelContext& ctx, const Tensor& a, const Tensor& b) {
  const auto& ad = a.dims();
  const auto& bd = b.dims();
  if (bd.size() > ad.size()) ctx.fail("B has a higher rank than A");
  const size_t lead = ad.size() - bd.size();
  std::vector<int64_t> bStride(ad.size(), 0);
  int64_t s = 1;
  for (size_t i = bd.size(); i-- > 0;) {
    if (bd[i] != 1 && bd[i] != ad[i + lead]) ctx.fail("B does not broadcast into A");
    bStride[i + lead] = bd[i] == 1 ? 0 : s;
    s *= bd[i];
  }
  std::vector<double> out = a.toDouble();
  const std::vector<double> bv = b.toDouble();
  std::vector<int64_t> idx(ad.size(), 0);
  for (size_t i = 0; i < out.size(); ++i) {
    int64_t off = 0;
    for (size_t d = 0; d < ad.size(); ++d) off += idx[d] * bStride[d];
    out[i] += bv[static_cast<size_t>(off)];
    for (size_t d = ad.size(); d-- > 0;)
      if (++idx[d] < ad[d]) break;
      else idx[d] = 0;
  }
  return out;
}

// Normalises each row of `rowSize` trailing elements of x in place; scale/bias are per element of the row (or one
// value). centred: LayerNorm ((x - mean) / sqrt(var + eps)); else RmsNorm (x / sqrt(mean(x²) + eps)).
void normalise(const KernelContext& ctx, std::vector<double>& x, int64_t rowSize, const Tensor* scale,
               const Tensor* bias, bool centred) {
  const double eps = ctx.node().attrFloat("epsilon", 1e-5f);
  const auto param = [&](const Tensor* t) {
    std::vector<double> v = t ? t->toDouble() : std::vector<double>{};
    if (t && v.size() != 1 && static_cast<int64_t>(v.size()) != rowSize) ctx.fail("a parameter does not fit the row");
    return v;
  };
  const std::vector<double> g = param(scale), b = param(bias);
  const auto at = [](const std::vector<double>& v, size_t i, double none) {
    return v.empty() ? none : v[v.size() == 1 ? 0 : i];
  };
  const auto n = static_cast<size_t>(rowSize);
  for (size_t row = 0; n && row < x.size() / n; ++row) {
    double* r = x.data() + row * n;
    double mean = 0, sq = 0;
    for (size_t i = 0; i < n; ++i) mean += r[i];
    mean = centred ? mean / static_cast<double>(n) : 0.0;
    for (size_t i = 0; i < n; ++i) sq += (r[i] - mean) * (r[i] - mean);
    const double inv = 1.0 / std::sqrt(sq / static_cast<double>(n) + eps);
    for (size_t i = 0; i < n; ++i) r[i] = (r[i] - mean) * inv * at(g, i, 1.0) + at(b, i, 0.0);
  }
}

template <bool Centred, bool WithAdd>
std::vector<Tensor> norm(const KernelContext& ctx) {
  const Tensor& a = ctx.required(0);
  if (!isFloating(a.dtype()) || (WithAdd && !isFloating(ctx.required(1).dtype()))) return {};
  std::vector<double> x = WithAdd ? addInto(ctx, a, ctx.required(1)) : a.toDouble();
  const auto rank = static_cast<int64_t>(a.dims().size());
  const int64_t axis = normalizeAxis(ctx, ctx.node().attrInt("axis", -1), rank, "axis");
  int64_t rowSize = 1;
  for (auto d = static_cast<size_t>(axis); d < a.dims().size(); ++d) rowSize *= a.dims()[d];
  std::vector<Tensor> out;
  const Tensor sum = inTypeOf(a, x);
  const size_t first = WithAdd ? 2 : 1;
  normalise(ctx, x, rowSize, ctx.input(first), Centred ? ctx.input(first + 1) : nullptr, Centred);
  out.push_back(inTypeOf(a, x));
  if (WithAdd && ctx.node().numOutputs() > 1) out.push_back(sum);
  return out;
}

}  // namespace

void registerFusedKernels(KernelRegistry& r) {
  r.add("Gelu", gelu, "kiln");
  r.add("LayerNorm", norm<true, false>, "kiln");
  r.add("RmsNorm", norm<false, false>, "kiln");
  r.add("AddLayerNorm", norm<true, true>, "kiln");
  r.add("AddRmsNorm", norm<false, true>, "kiln");
}

}  // namespace kiln::kernels
