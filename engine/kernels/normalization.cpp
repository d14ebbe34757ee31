// Normalisations: BatchNormalization (inference, and training_mode's batch statistics with running averages),
// InstanceNormalization, LayerNormalization (axis, epsilon, optional Mean / InvStdDev outputs), LRN,
// MeanVarianceNormalization, GroupNormalization (18, 21), RMSNormalization (23) and LpNormalization. Statistics and arithmetic in double, rounded once into the output type.
#include <cmath>

#include "kernels/nn_kernels.h"
#include "ir/graph.h"
#include "ir/shape.h"

namespace kiln::kernels {
namespace {

// A per-channel parameter: a floating vector of `count` values.
std::vector<double> channelParam(const KernelContext& ctx, size_t input, int64_t count, const char* what) {
  const Tensor& t = ctx.required(input);
  if (!isFloating(t.dtype())) ctx.fail(std::string(what) + " must be a floating tensor");
  if (t.dims().size() != 1 || t.dims()[0] != count) ctx.fail(std::string(what) + " must have one value per channel");
  return t.toDouble();
}

// X's extents as [N, C, rest]: the channel axis is 1.
struct ChannelLayout {
  int64_t batch = 0, channels = 0, inner = 1;
};
ChannelLayout channelLayout(const KernelContext& ctx, const Tensor& x, size_t minRank) {
  if (x.dims().size() < minRank) ctx.fail("X must have rank " + std::to_string(minRank) + " or more");
  ChannelLayout l;
  l.batch = x.dims()[0];
  l.channels = x.dims().size() > 1 ? x.dims()[1] : 1;
  for (size_t d = 2; d < x.dims().size(); ++d) l.inner *= x.dims()[d];
  if (x.numel() == 0) l.batch = l.inner = 0;  // nothing to walk (and the product above may have overflowed)
  return l;
}

template <typename S>
std::vector<Tensor> batchNormTyped(const KernelContext& ctx, const Tensor& x) {
  const ChannelLayout l = channelLayout(ctx, x, 2);
  const std::vector<double> scale = channelParam(ctx, 1, l.channels, "scale");
  const std::vector<double> bias = channelParam(ctx, 2, l.channels, "B");
  std::vector<double> mean = channelParam(ctx, 3, l.channels, "mean");
  std::vector<double> var = channelParam(ctx, 4, l.channels, "var");
  const double eps = ctx.node().attrFloat("epsilon", 1e-5f);
  const bool training = ctx.node().attrInt("training_mode", 0) != 0;
  if constexpr (std::is_same_v<S, float> || std::is_same_v<S, double>) {
    if (!training) {
      // Inference: one affine map per channel, y = x·k + (B − mean·k) with k and the shift found in double and the
      // map applied in the tensor's own type, straight from x to y (as ONNX Runtime folds it into the convolution).
      const nn::Operand<S, S> xin(ctx, x);
      nn::Result<S, S> y(ctx, x.dtype(), x.dims());
      for (int64_t n = 0; n < l.batch; ++n)
        for (int64_t c = 0; c < l.channels; ++c) {
          const auto cs = static_cast<size_t>(c);
          const auto [k, shift] = nn::batchNormAffine(scale[cs], bias[cs], mean[cs], var[cs], eps);
          nn::affineRow(xin.data() + (n * l.channels + c) * l.inner, y.data() + (n * l.channels + c) * l.inner,
                        l.inner, static_cast<S>(k), static_cast<S>(shift));
        }
      return {y.finish()};
    }
  }
  const std::vector<double> xv = nn::loadAll<S, double>(ctx, x);
  const auto at = [&](int64_t n, int64_t c, int64_t i) {
    return static_cast<size_t>((n * l.channels + c) * l.inner + i);
  };
  std::vector<Tensor> out;
  std::vector<double> runningMean = mean, runningVar = var;
  if (training) {
    // Batch statistics over N and the spatial axes (population variance); the running averages move towards
    // them by 1 - momentum.
    const double momentum = ctx.node().attrFloat("momentum", 0.9f);
    const double count = static_cast<double>(l.batch * l.inner);
    for (int64_t c = 0; c < l.channels; ++c) {
      double sum = 0, sq = 0;
      for (int64_t n = 0; n < l.batch; ++n)
        for (int64_t i = 0; i < l.inner; ++i) sum += xv[at(n, c, i)];
      const double m = sum / count;
      for (int64_t n = 0; n < l.batch; ++n)
        for (int64_t i = 0; i < l.inner; ++i) sq += (xv[at(n, c, i)] - m) * (xv[at(n, c, i)] - m);
      const auto cs = static_cast<size_t>(c);
      runningMean[cs] = mean[cs] * momentum + m * (1 - momentum);
      runningVar[cs] = var[cs] * momentum + sq / count * (1 - momentum);
      mean[cs] = m;
      var[cs] = sq / count;
    }
  }
  std::vector<double> y(xv.size());
  for (int64_t n = 0; n < l.batch; ++n)
    for (int64_t c = 0; c < l.channels; ++c) {
      const auto cs = static_cast<size_t>(c);
      const double k = scale[cs] / std::sqrt(var[cs] + eps);
      for (int64_t i = 0; i < l.inner; ++i) y[at(n, c, i)] = (xv[at(n, c, i)] - mean[cs]) * k + bias[cs];
    }
  out.push_back(nn::storeAll<S>(ctx, x.dims(), y));
  if (training && ctx.node().numOutputs() > 1)
    out.push_back(convertTensor(Tensor::fromVector(DType::Double, {l.channels}, runningMean), ctx.required(3).dtype()));
  if (training && ctx.node().numOutputs() > 2)
    out.push_back(convertTensor(Tensor::fromVector(DType::Double, {l.channels}, runningVar), ctx.required(4).dtype()));
  return out;
}

std::vector<Tensor> batchNorm(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  const bool training = ctx.node().attrInt("training_mode", 0) != 0;
  // Before opset 14 extra outputs meant training statistics (saved mean/var), and before opset 9 spatial = 0 meant
  // per-element parameters: neither is evaluated here.
  if (ctx.node().numOutputs() > (training ? 3u : 1u) || ctx.node().attrInt("spatial", 1) == 0) return {};
  std::vector<Tensor> out;
  dispatch<kFloats>(x.dtype(), [&](auto tag) { out = batchNormTyped<typename decltype(tag)::type>(ctx, x); });
  return out;
}

std::vector<Tensor> instanceNorm(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  std::vector<Tensor> out;
  dispatch<kFloats>(x.dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    const ChannelLayout l = channelLayout(ctx, x, 3);
    const std::vector<double> scale = channelParam(ctx, 1, l.channels, "scale");
    const std::vector<double> bias = channelParam(ctx, 2, l.channels, "B");
    const double eps = ctx.node().attrFloat("epsilon", 1e-5f);
    std::vector<double> v = nn::loadAll<S, double>(ctx, x);
    for (int64_t n = 0; n < l.batch; ++n)
      for (int64_t c = 0; c < l.channels; ++c) {
        double* p = v.data() + (n * l.channels + c) * l.inner;
        double mean = 0, sq = 0;
        for (int64_t i = 0; i < l.inner; ++i) mean += p[i];
        mean /= static_cast<double>(l.inner);
        for (int64_t i = 0; i < l.inner; ++i) sq += (p[i] - mean) * (p[i] - mean);
        const auto cs = static_cast<size_t>(c);
        const double k = scale[cs] / std::sqrt(sq / static_cast<double>(l.inner) + eps);
        for (int64_t i = 0; i < l.inner; ++i) p[i] = (p[i] - mean) * k + bias[cs];
      }
    out.push_back(nn::storeAll<S>(ctx, x.dims(), v));
  });
  return out;
}

// Offsets of a parameter broadcast (unidirectionally) into the normalised block `block`, per block position.
std::vector<int64_t> blockOffsets(const KernelContext& ctx, const Tensor& param, const std::vector<int64_t>& block,
                                  int64_t size, const char* what) {
  const auto& d = param.dims();
  if (d.size() > block.size()) ctx.fail(std::string(what) + " has a higher rank than the normalised block");
  for (size_t i = 0; i < d.size(); ++i)
    if (d[i] != 1 && d[i] != block[block.size() - d.size() + i])
      ctx.fail(std::string(what) + " does not broadcast to the normalised block");
  checkScratch(ctx, size, sizeof(int64_t));
  std::vector<int64_t> offsets(static_cast<size_t>(size));
  BroadcastWalker w(block, {&d});
  for (int64_t i = 0; i < size; ++i, w.next()) offsets[static_cast<size_t>(i)] = w.offset(0);
  return offsets;
}

template <typename S>
std::vector<Tensor> layerNormTyped(const KernelContext& ctx, const Tensor& x) {
  const Node& node = ctx.node();
  const auto rank = static_cast<int64_t>(x.dims().size());
  const auto axis = static_cast<size_t>(normalizeAxis(ctx, node.attrInt("axis", -1), rank, "axis"));
  const std::vector<int64_t> block(x.dims().begin() + static_cast<ptrdiff_t>(axis), x.dims().end());
  const int64_t rowSize = x.numel() == 0 ? 0 : *checkedProduct(block);
  const Tensor& scaleT = ctx.required(1);
  const Tensor* biasT = ctx.input(2);
  if (scaleT.dtype() != x.dtype() || (biasT && biasT->dtype() != x.dtype()))
    ctx.fail("Scale and B must have X's element type");
  const std::vector<int64_t> scaleAt = blockOffsets(ctx, scaleT, block, rowSize, "Scale");
  const std::vector<int64_t> biasAt = biasT ? blockOffsets(ctx, *biasT, block, rowSize, "B") : std::vector<int64_t>{};
  const std::vector<double> scale = scaleT.toDouble(), bias = biasT ? biasT->toDouble() : std::vector<double>{};
  const double eps = node.attrFloat("epsilon", 1e-5f);
  std::vector<double> v = nn::loadAll<S, double>(ctx, x);
  // Mean and InvStdDev keep X's leading dims with the normalised ones as 1, in the stash type (1 = float).
  std::vector<int64_t> statDims = x.dims();
  for (size_t d = axis; d < statDims.size(); ++d) statDims[d] = 1;
  // Rows of an empty block still have a (NaN) mean when the leading dims are not empty.
  const std::optional<int64_t> rowCount = checkedProduct(statDims);
  if (!rowCount) ctx.fail("row count overflows");
  const int64_t rows = *rowCount;
  checkScratch(ctx, rows, 2 * sizeof(double));
  std::vector<double> means(static_cast<size_t>(rows)), invStd(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    double* p = v.data() + r * rowSize;
    double mean = 0, sq = 0;
    for (int64_t i = 0; i < rowSize; ++i) mean += p[i];
    mean /= static_cast<double>(rowSize);
    for (int64_t i = 0; i < rowSize; ++i) sq += (p[i] - mean) * (p[i] - mean);
    const double inv = 1.0 / std::sqrt(sq / static_cast<double>(rowSize) + eps);
    for (int64_t i = 0; i < rowSize; ++i) {
      const auto si = static_cast<size_t>(i);
      p[i] = (p[i] - mean) * inv * scale[static_cast<size_t>(scaleAt[si])] +
             (biasT ? bias[static_cast<size_t>(biasAt[si])] : 0.0);
    }
    means[static_cast<size_t>(r)] = mean;
    invStd[static_cast<size_t>(r)] = inv;
  }
  std::vector<Tensor> out{nn::storeAll<S>(ctx, x.dims(), v)};
  const DType stash = node.attrInt("stash_type", 1) == 1 ? DType::Float : x.dtype();
  if (node.numOutputs() > 1) out.push_back(convertTensor(Tensor::fromVector(DType::Double, statDims, means), stash));
  if (node.numOutputs() > 2) out.push_back(convertTensor(Tensor::fromVector(DType::Double, statDims, invStd), stash));
  return out;
}

std::vector<Tensor> layerNorm(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  std::vector<Tensor> out;
  dispatch<kFloats>(x.dtype(), [&](auto tag) { out = layerNormTyped<typename decltype(tag)::type>(ctx, x); });
  return out;
}

std::vector<Tensor> lrn(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  std::vector<Tensor> out;
  dispatch<kFloats>(x.dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    const ChannelLayout l = channelLayout(ctx, x, 3);
    const int64_t size = ctx.node().attrInt("size", 0);
    if (size < 1) ctx.fail("size must be positive");
    const double alpha = ctx.node().attrFloat("alpha", 1e-4f), beta = ctx.node().attrFloat("beta", 0.75f);
    const double bias = ctx.node().attrFloat("bias", 1.0f);
    const std::vector<double> v = nn::loadAll<S, double>(ctx, x);
    std::vector<double> y(v.size());
    // The window over channels: floor((size - 1) / 2) before c, ceil((size - 1) / 2) after.
    const int64_t before = (size - 1) / 2, after = size - 1 - before;
    for (int64_t n = 0; n < l.batch; ++n)
      for (int64_t c = 0; c < l.channels; ++c)
        for (int64_t i = 0; i < l.inner; ++i) {
          double sq = 0;
          for (int64_t j = std::max<int64_t>(0, c - before); j <= std::min(l.channels - 1, c + after); ++j) {
            const double e = v[static_cast<size_t>((n * l.channels + j) * l.inner + i)];
            sq += e * e;
          }
          const auto at = static_cast<size_t>((n * l.channels + c) * l.inner + i);
          y[at] = v[at] / std::pow(bias + alpha / static_cast<double>(size) * sq, beta);
        }
    out.push_back(nn::storeAll<S>(ctx, x.dims(), y));
  });
  return out;
}

// MeanVarianceNormalization: (X - E[X]) / (sqrt(E[X²] - E[X]²) + 1e-9) over `axes` (default [0, 2, 3]), as its
// ONNX function body computes it.
std::vector<Tensor> meanVarianceNorm(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  std::vector<Tensor> out;
  dispatch<kFloats>(x.dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    const auto rank = static_cast<int64_t>(x.dims().size());
    const std::vector<int64_t> axes =
        hasAttr(ctx.node(), "axes") ? ctx.node().attrInts("axes") : std::vector<int64_t>{0, 2, 3};
    std::vector<int64_t> kept = x.dims();
    for (int64_t a : axes) kept[static_cast<size_t>(normalizeAxis(ctx, a, rank, "axis"))] = 1;
    std::vector<int64_t> strides = stridesOf(kept);
    for (size_t d = 0; d < kept.size(); ++d)
      if (kept[d] == 1) strides[d] = 0;
    const int64_t groups = *checkedProduct(kept);
    if (x.numel() == 0) {
      out.push_back(x);
      return;
    }
    const double count = static_cast<double>(x.numel() / groups);
    std::vector<double> v = nn::loadAll<S, double>(ctx, x);
    std::vector<double> sum(static_cast<size_t>(groups)), sq(static_cast<size_t>(groups));
    std::vector<int64_t> group(v.size());
    StrideWalker w(x.dims(), {strides});
    for (size_t i = 0; i < v.size(); ++i, w.next()) {
      group[i] = w.offset(0);
      sum[static_cast<size_t>(group[i])] += v[i];
      sq[static_cast<size_t>(group[i])] += v[i] * v[i];
    }
    for (size_t i = 0; i < v.size(); ++i) {
      const auto g = static_cast<size_t>(group[i]);
      const double mean = sum[g] / count;
      v[i] = (v[i] - mean) / (std::sqrt(std::max(0.0, sq[g] / count - mean * mean)) + 1e-9);
    }
    out.push_back(nn::storeAll<S>(ctx, x.dims(), v));
  });
  return out;
}

// GroupNormalization (18, 21): X [N, C, ...] in num_groups groups of C / G channels; mean and variance per (n, group)
// over its channels and spatial extent, in double. Opset 18 has one scale / bias per group, 21 one per channel (a
// model whose opset is not known is read by the parameters' length).
std::vector<Tensor> groupNorm(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  std::vector<Tensor> out;
  dispatch<kFloats>(x.dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    const ChannelLayout l = channelLayout(ctx, x, 2);
    const int64_t groups = ctx.node().attrInt("num_groups", 0);
    if (groups < 1 || l.channels % groups != 0)
      ctx.fail("num_groups " + std::to_string(groups) + " does not divide the " + std::to_string(l.channels) +
               " channels");
    const int64_t opset = ctx.limits().opset;
    const int64_t perGroupLen = ctx.required(1).numel();
    const bool perChannel = opset >= 21 || (opset == 0 && perGroupLen == l.channels && perGroupLen != groups);
    const int64_t paramLen = perChannel ? l.channels : groups;
    const std::vector<double> scale = channelParam(ctx, 1, paramLen, "scale");
    const std::vector<double> bias = channelParam(ctx, 2, paramLen, "bias");
    const double eps = ctx.node().attrFloat("epsilon", 1e-5f);
    std::vector<double> v = nn::loadAll<S, double>(ctx, x);
    const int64_t perGroup = l.channels / groups;
    const int64_t span = perGroup * l.inner;  // elements of one (n, group)
    for (int64_t n = 0; n < l.batch; ++n)
      for (int64_t g = 0; g < groups; ++g) {
        double* p = v.data() + (n * groups + g) * span;
        double mean = 0, sq = 0;
        for (int64_t i = 0; i < span; ++i) mean += p[i];
        mean /= static_cast<double>(span);
        for (int64_t i = 0; i < span; ++i) sq += (p[i] - mean) * (p[i] - mean);
        const double inv = 1.0 / std::sqrt(sq / static_cast<double>(span) + eps);
        for (int64_t c = 0; c < perGroup; ++c) {
          const auto k = static_cast<size_t>(perChannel ? g * perGroup + c : g);
          for (int64_t i = 0; i < l.inner; ++i) {
            double& e = p[c * l.inner + i];
            e = (e - mean) * inv * scale[k] + bias[k];
          }
        }
      }
    out.push_back(nn::storeAll<S>(ctx, x.dims(), v));
  });
  return out;
}

// RMSNormalization (23): X / sqrt(mean(X² over [axis, rank)) + epsilon) · scale, scale broadcast into the block.
std::vector<Tensor> rmsNormalization(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  std::vector<Tensor> out;
  dispatch<kFloats>(x.dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    const auto rank = static_cast<int64_t>(x.dims().size());
    const auto axis = static_cast<size_t>(normalizeAxis(ctx, ctx.node().attrInt("axis", -1), rank, "axis"));
    const std::vector<int64_t> block(x.dims().begin() + static_cast<ptrdiff_t>(axis), x.dims().end());
    const int64_t rowSize = x.numel() == 0 ? 0 : *checkedProduct(block);
    const Tensor& scaleT = ctx.required(1);
    if (!isFloating(scaleT.dtype())) ctx.fail("scale must be a floating tensor");
    const std::vector<int64_t> scaleAt = blockOffsets(ctx, scaleT, block, rowSize, "scale");
    const std::vector<double> scale = scaleT.toDouble();
    const double eps = ctx.node().attrFloat("epsilon", 1e-5f);
    std::vector<double> v = nn::loadAll<S, double>(ctx, x);
    const int64_t rows = rowSize == 0 ? 0 : x.numel() / rowSize;
    for (int64_t r = 0; r < rows; ++r) {
      double* p = v.data() + r * rowSize;
      double sq = 0;
      for (int64_t i = 0; i < rowSize; ++i) sq += p[i] * p[i];
      const double inv = 1.0 / std::sqrt(sq / static_cast<double>(rowSize) + eps);
      for (int64_t i = 0; i < rowSize; ++i) p[i] = p[i] * inv * scale[static_cast<size_t>(scaleAt[static_cast<size_t>(i)])];
    }
    out.push_back(nn::storeAll<S>(ctx, x.dims(), v));
  });
  return out;
}

// LpNormalization: x / ||x||_p along `axis` (p 1 or 2); a zero vector stays zero.
std::vector<Tensor> lpNormalization(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  const int64_t p = ctx.node().attrInt("p", 2);
  if (p != 1 && p != 2) ctx.fail("p must be 1 or 2");
  std::vector<Tensor> out;
  dispatch<kFloats>(x.dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    const auto rank = static_cast<int64_t>(x.dims().size());
    const auto axis = static_cast<size_t>(normalizeAxis(ctx, ctx.node().attrInt("axis", -1), rank, "axis"));
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < axis; ++d) outer *= x.dims()[d];
    for (size_t d = axis + 1; d < x.dims().size(); ++d) inner *= x.dims()[d];
    const int64_t n = x.dims()[axis];
    std::vector<double> v = nn::loadAll<S, double>(ctx, x);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        double norm = 0;
        for (int64_t k = 0; k < n; ++k) {
          const double e = v[static_cast<size_t>((o * n + k) * inner + i)];
          norm += p == 1 ? std::fabs(e) : e * e;
        }
        if (p == 2) norm = std::sqrt(norm);
        if (norm == 0) continue;
        for (int64_t k = 0; k < n; ++k) v[static_cast<size_t>((o * n + k) * inner + i)] /= norm;
      }
    out.push_back(nn::storeAll<S>(ctx, x.dims(), v));
  });
  return out;
}

}  // namespace

void registerNormalizationKernels(KernelRegistry& r) {
  r.add("LpNormalization", lpNormalization);
  r.add("GroupNormalization", groupNorm);
  r.add("RMSNormalization", rmsNormalization);
  r.add("BatchNormalization", batchNorm);
  r.add("InstanceNormalization", instanceNorm);
  r.add("LayerNormalization", layerNorm);
  r.add("LRN", lrn);
  r.add("MeanVarianceNormalization", meanVarianceNorm);
}

}  // namespace kiln::kernels
