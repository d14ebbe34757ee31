// The experimental ops of opsets 1-9 that older exports (Caffe2, CoreML converters) still carry: ImageScaler,
// Crop, and the element-wise Affine, ScaledTanh and ParametricSoftplus. Dropped from ONNX since, so libonnx has no
// definition; their meaning is the old spec's.
#include <cmath>
#include <cstring>

#include "kernels/kernel_util.h"
#include "ir/graph.h"

namespace kiln::kernels {
namespace {

// ImageScaler (an experimental op of opsets 1-9 older CNN exports still carry): y = scale · x + bias[c] over
// [N, C, ...] (an absent bias is zero).
std::vector<Tensor> imageScaler(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  if (!isFloating(x.dtype())) return {};
  if (x.dims().size() < 2) ctx.fail("X must be [N, C, ...]");
  std::vector<float> bias;
  if (const Attribute* a = ctx.node().attr("bias"); a && a->get<std::vector<float>>()) bias = *a->get<std::vector<float>>();
  const int64_t channels = x.dims()[1];
  if (!bias.empty() && static_cast<int64_t>(bias.size()) != channels)
    ctx.fail("bias holds " + std::to_string(bias.size()) + " values for " + std::to_string(channels) + " channels");
  const double scale = ctx.node().attrFloat("scale", 1.0f);
  int64_t inner = 1;
  for (size_t d = 2; d < x.dims().size(); ++d) inner *= x.dims()[d];
  std::vector<double> v = x.toDouble();
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = scale * v[i] + (bias.empty() ? 0.0 : bias[size_t((int64_t(i) / inner) % channels)]);
  return {convertTensor(Tensor::fromVector(DType::Double, x.dims(), v), x.dtype(), ctx.limits().maxOutputBytes)};
}

// Crop(X [N, C, H, W]) with border = [left, top, right, bottom]; with scale = [height, width] the window has that
// size from (top, left) instead of stopping `bottom` / `right` short of the edge.
std::vector<Tensor> crop(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  if (x.dims().size() != 4) ctx.fail("X must be [N, C, H, W]");
  const std::vector<int64_t> border = ctx.node().attrInts("border");
  const std::vector<int64_t> scale = ctx.node().attrInts("scale");
  if (border.size() != 4) ctx.fail("border must hold left, top, right, bottom");
  if (!scale.empty() && scale.size() != 2) ctx.fail("scale must hold height and width");
  const int64_t n = x.dims()[0], c = x.dims()[1], h = x.dims()[2], w = x.dims()[3];
  const int64_t left = border[0], top = border[1];
  const int64_t height = scale.empty() ? h - top - border[3] : scale[0];
  const int64_t width = scale.empty() ? w - left - border[2] : scale[1];
  if (left < 0 || top < 0 || height < 0 || width < 0 || top + height > h || left + width > w)
    ctx.fail("the crop window leaves the " + std::to_string(h) + "x" + std::to_string(w) + " image");
  OutBuffer out(ctx, x.dtype(), {n, c, height, width});
  const size_t e = static_cast<size_t>(dtypeSize(x.dtype()));
  for (int64_t p = 0; p < n * c; ++p)
    for (int64_t r = 0; r < height; ++r)
      std::memcpy(out.data() + static_cast<size_t>((p * height + r) * width) * e,
                  x.data() + static_cast<size_t>((p * h + top + r) * w + left) * e, static_cast<size_t>(width) * e);
  return {out.finish()};
}

// y = f(x; alpha, beta) element-wise, computed in double and rounded once. The defaults are whole numbers, passed as
// int: clang 14 (the fuzz preset) does not take floating-point template parameters.
template <double (*F)(double x, double alpha, double beta), int DefaultAlpha, int DefaultBeta>
std::vector<Tensor> alphaBeta(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  if (!isFloating(x.dtype())) return {};
  const double alpha = ctx.node().attrFloat("alpha", float(DefaultAlpha)),
               beta = ctx.node().attrFloat("beta", float(DefaultBeta));
  std::vector<double> v = x.toDouble();
  for (double& e : v) e = F(e, alpha, beta);
  return {convertTensor(Tensor::fromVector(DType::Double, x.dims(), v), x.dtype(), ctx.limits().maxOutputBytes)};
}

double affine(double x, double alpha, double beta) { return alpha * x + beta; }
double scaledTanh(double x, double alpha, double beta) { return alpha * std::tanh(beta * x); }
double parametricSoftplus(double x, double alpha, double beta) { return alpha * std::log1p(std::exp(beta * x)); }

}  // namespace

void registerExperimentalKernels(KernelRegistry& r) {
  r.add("Affine", alphaBeta<affine, 1, 0>);
  r.add("ScaledTanh", alphaBeta<scaledTanh, 1, 1>);
  r.add("ParametricSoftplus", alphaBeta<parametricSoftplus, 1, 1>);
  r.add("ImageScaler", imageScaler);
  r.add("Crop", crop);
}

}  // namespace kiln::kernels
