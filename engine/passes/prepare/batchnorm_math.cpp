#include "passes/prepare/batchnorm_math.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/kernel.h"
#include "ir/graph.h"
#include "passes/prepare/fold_support.h"
#include "util/parallel_for.h"

namespace kiln {

bool isInferenceBatchNorm(const Node& bn) {
  if (bn.attrInt("training_mode", 0) != 0) return false;
  if (bn.attr("is_test") && bn.attrInt("is_test", 0) == 0) return false;  // opset <= 6 training flag
  if (bn.attr("spatial") && bn.attrInt("spatial", 1) == 0) return false;  // per-element statistics (opset < 9)
  if (bn.numInputs() < 5) return false;
  for (size_t i = 1; i < bn.numOutputs(); ++i)
    if (const Value* o = bn.output(i); o && (o->hasUses() || o->isGraphOutput())) return false;
  return true;
}

std::optional<BatchNormAffine> batchNormAffine(const Node& bn, int64_t channels) {
  std::vector<double> p[4];  // scale (gamma), B (beta), mean, var
  for (size_t i = 0; i < 4; ++i) {
    const Tensor* t = constantData(bn.input(i + 1));
    if (!t || !isFloating(t->dtype()) || t->numel() != channels) return std::nullopt;
    p[i] = t->toDouble();
  }
  const double eps = bn.attrFloat("epsilon", 1e-5f);
  BatchNormAffine a;
  for (size_t c = 0; c < static_cast<size_t>(channels); ++c) {
    const double s = p[0][c] / std::sqrt(p[3][c] + eps);
    a.scale.push_back(s);
    a.shift.push_back(p[1][c] - s * p[2][c]);
  }
  return a;
}

Tensor tensorInType(DType t, std::vector<int64_t> dims, const std::vector<double>& values) {
  return convertTensor(Tensor::fromVector(DType::Double, std::move(dims), values), t);
}

namespace {

// w[c, ...] · scale[c], each product rounded once into w's type. fp32 weights (nearly every export) are scaled in
// one pass from the source (which may be a view at any byte offset of a mapped model file) into the new tensor's
// bytes, vectorised (scaleFloats): a ResNet-50's 25M weights would otherwise pass through three double-sized copies.
Tensor scaledPerOutputChannel(const Tensor& w, const std::vector<double>& scale, size_t perChannel) {
  if (w.dtype() == DType::Float) {
    const size_t n = static_cast<size_t>(w.numel());
    // Every element is written below.
    auto storage = std::make_shared<HeapStorage>(n * sizeof(float), HeapStorage::Start::Unset);
    const auto* in = reinterpret_cast<const float*>(w.data());
    auto* out = reinterpret_cast<float*>(storage->data());
    const size_t scaled = std::min(n, scale.size() * perChannel);
    // Channels split across the cores (each channel's elements are contiguous).
    const size_t minChannels = std::max<size_t>(1, (size_t{1} << 16) / std::max<size_t>(perChannel, 1));
    parallelFor(perChannel ? (scaled + perChannel - 1) / perChannel : 0, minChannels, 1, [&](size_t c0, size_t c1) {
      for (size_t c = c0; c < c1; ++c) {
        const size_t begin = c * perChannel, end = std::min(scaled, begin + perChannel);
        scaleFloats(in + begin, out + begin, end - begin, scale[c]);
      }
    });
    if (scaled < n) std::memcpy(out + scaled, in + scaled, (n - scaled) * sizeof(float));  // channels without a scale
    return Tensor(DType::Float, w.dims(), std::move(storage));
  }
  std::vector<double> v = w.toDouble();
  for (size_t i = 0; i < v.size(); ++i) v[i] *= scale[i / perChannel];
  return tensorInType(w.dtype(), w.dims(), v);
}

}  // namespace

std::optional<FoldedWeights> foldBatchNormIntoConv(const Tensor& w, const Tensor* bias, const Node& bn) {
  if (w.dims().size() < 3 || w.dims()[0] <= 0) return std::nullopt;
  const int64_t m = w.dims()[0];
  const auto a = batchNormAffine(bn, m);
  if (!a || (bias && bias->numel() != m)) return std::nullopt;
  const size_t perChannel = static_cast<size_t>(w.numel() / m);
  std::vector<double> bv = bias ? bias->toDouble() : std::vector<double>(static_cast<size_t>(m), 0.0);
  for (size_t c = 0; c < bv.size(); ++c) bv[c] = a->scale[c] * bv[c] + a->shift[c];
  return FoldedWeights{scaledPerOutputChannel(w, a->scale, perChannel), tensorInType(w.dtype(), {m}, bv)};
}

}  // namespace kiln
