#include "kernels/conv_followers.h"

#include "ir/graph.h"
#include "kernels/nn_kernels.h"

namespace kiln::kernels {
namespace {

bool isOp(const Node& n, const char* type) { return n.domain().empty() && n.opType() == type; }

// The values of a Mul or Add operand that broadcasts along the channel axis of `out` only (one value per channel,
// or one for all) and leaves out's shape as it is; nullopt for any other operand.
std::optional<std::vector<double>> perChannelOperand(const Tensor& t, DType type, const std::vector<int64_t>& out) {
  if (t.dtype() != type || t.dims().size() > out.size()) return std::nullopt;
  const size_t skip = out.size() - t.dims().size();
  for (size_t i = 0; i < t.dims().size(); ++i) {
    const int64_t d = t.dims()[i];
    if (d != 1 && !(skip + i == 1 && d == out[1])) return std::nullopt;
  }
  return t.toDouble();
}

std::optional<std::vector<double>> channelParameter(const Tensor* t, int64_t channels) {
  if (!t || !isFloating(t->dtype()) || t->dims().size() != 1 || t->dims()[0] != channels) return std::nullopt;
  return t->toDouble();
}

// The step a follower computes on a tensor of `type` and extents `out`, or nullopt when its operands do not allow
// one (the node then runs on its own kernel, which reports what is wrong with them, if anything).
std::optional<nn::ChannelStep> stepFor(const ConvFollower& f, DType type, const std::vector<int64_t>& out) {
  using Kind = nn::ChannelStep::Kind;
  const Node& n = *f.node;
  const auto input = [&](size_t i) { return i < f.inputs.size() && i != f.chainInput ? f.inputs[i] : nullptr; };
  nn::ChannelStep step;
  if (isOp(n, "Relu")) {
    step.kind = Kind::Clamp;
    step.a = {0.0};
    step.b = {std::numeric_limits<double>::infinity()};
    return step;
  }
  if (isOp(n, "Clip")) {
    step.kind = Kind::Clamp;
    double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
    if (hasAttr(n, "min")) lo = static_cast<double>(n.attrFloat("min", 0.0f));
    if (hasAttr(n, "max")) hi = static_cast<double>(n.attrFloat("max", 0.0f));
    for (size_t i = 1; i <= 2; ++i)
      if (const Tensor* b = input(i)) {
        if (b->dtype() != type || b->numel() != 1) return std::nullopt;
        (i == 1 ? lo : hi) = b->toDouble()[0];
      }
    step.a = {lo};
    step.b = {hi};
    return step;
  }
  if (isOp(n, "Mul") || isOp(n, "Add")) {
    const Tensor* other = input(1 - f.chainInput);
    if (!other) return std::nullopt;
    std::optional<std::vector<double>> v = perChannelOperand(*other, type, out);
    if (!v) return std::nullopt;
    step.kind = isOp(n, "Mul") ? Kind::Mul : Kind::Add;
    step.a = std::move(*v);
    return step;
  }
  if (isOp(n, "BatchNormalization")) {
    const int64_t channels = out[1];
    const auto scale = channelParameter(input(1), channels), bias = channelParameter(input(2), channels);
    const auto mean = channelParameter(input(3), channels), var = channelParameter(input(4), channels);
    if (!scale || !bias || !mean || !var) return std::nullopt;
    const double eps = n.attrFloat("epsilon", 1e-5f);
    step.kind = Kind::Affine;
    for (size_t c = 0; c < static_cast<size_t>(channels); ++c) {
      const auto [k, shift] = nn::batchNormAffine((*scale)[c], (*bias)[c], (*mean)[c], (*var)[c], eps);
      step.a.push_back(k);
      step.b.push_back(shift);
    }
    return step;
  }
  return std::nullopt;
}

template <typename S>
Tensor convolveTyped(const KernelContext& ctx, const nn::ConvShape& s, const nn::ChannelSteps& steps) {
  const Tensor &x = ctx.required(0), &w = ctx.required(1);
  const Tensor* b = ctx.input(2);
  nn::Result<S, S> y(ctx, x.dtype(), s.outDims);
  const nn::Operand<S, S> xv(ctx, x), wv(ctx, w);
  const std::optional<nn::Operand<S, S>> bv = b ? std::optional<nn::Operand<S, S>>(std::in_place, ctx, *b) : std::nullopt;
  nn::convolve(ctx, s, xv.data(), wv.data(), bv ? bv->data() : nullptr, y.data(), &steps);
  return y.finish();
}

}  // namespace

bool canFollowConv(const Node& n, size_t chainInput) {
  if (n.numOutputs() != 1 || !n.output(0)) return false;
  if (isOp(n, "Relu") || isOp(n, "Clip")) return chainInput == 0;
  if (isOp(n, "Mul") || isOp(n, "Add")) return chainInput <= 1 && n.numInputs() <= 2;
  if (isOp(n, "BatchNormalization"))
    return chainInput == 0 && n.attrInt("training_mode", 0) == 0 && n.attrInt("spatial", 1) == 1;
  return false;
}

namespace {

nn::ChannelSteps stepsOf(const std::vector<ConvFollower>& followers, DType type, const std::vector<int64_t>& out,
                         bool& ok) {
  nn::ChannelSteps steps;
  ok = true;
  for (const ConvFollower& f : followers) {
    std::optional<nn::ChannelStep> step;
    if (f.node && canFollowConv(*f.node, f.chainInput)) step = stepFor(f, type, out);
    if (!step) {
      ok = false;
      return {};
    }
    steps.push_back(std::move(*step));
  }
  return steps;
}

// One block of 16 channels (`lanes` real), `count` positions: the steps lane by lane, as applyChannelSteps does them
// channel by channel (the same operations in the same order: the same bits); spare lanes come out zero.
void stepsOnBlock(const nn::ChannelSteps& steps, int64_t block, int64_t lanes, const float* x, float* y,
                  int64_t count) {
  constexpr int64_t kC0 = 16;
  struct Lanes {
    nn::ChannelStep::Kind kind;
    float a[kC0], b[kC0];
  };
  std::vector<Lanes> perLane;
  for (const nn::ChannelStep& s : steps) {
    Lanes l{s.kind, {}, {}};
    for (int64_t i = 0; i < lanes; ++i) {
      const auto c = static_cast<size_t>(block * kC0 + i);
      l.a[i] = static_cast<float>(s.a.size() == 1 ? s.a[0] : s.a[c]);
      if (!s.b.empty()) l.b[i] = static_cast<float>(s.b.size() == 1 ? s.b[0] : s.b[c]);
    }
    perLane.push_back(l);
  }
  for (int64_t p = 0; p < count; ++p) {
    float v[kC0];
    std::copy_n(x + p * kC0, kC0, v);
    for (const Lanes& l : perLane) switch (l.kind) {
        case nn::ChannelStep::Kind::Add:
          for (int64_t i = 0; i < kC0; ++i) v[i] = v[i] + l.a[i];
          break;
        case nn::ChannelStep::Kind::Mul:
          for (int64_t i = 0; i < kC0; ++i) v[i] = v[i] * l.a[i];
          break;
        case nn::ChannelStep::Kind::Affine:
          for (int64_t i = 0; i < kC0; ++i) v[i] = v[i] * l.a[i] + l.b[i];
          break;
        case nn::ChannelStep::Kind::Clamp:
          for (int64_t i = 0; i < kC0; ++i) v[i] = nn::clampValue(v[i], l.a[i], l.b[i]);
          break;
      }
    for (int64_t i = lanes; i < kC0; ++i) v[i] = 0.0f;
    std::copy_n(v, kC0, y + p * kC0);
  }
}

}  // namespace

std::optional<Tensor> followersOnNc1hwc0(const std::vector<ConvFollower>& followers, const Tensor& x,
                                         const std::vector<int64_t>& logical, const KernelLimits& limits,
                                         std::span<float> into) {
  constexpr int64_t kC0 = 16;
  if (x.dtype() != DType::Float || logical.size() != 4 || followers.empty()) return std::nullopt;
  const int64_t c1 = (logical[1] + kC0 - 1) / kC0, plane = logical[2] * logical[3];
  if (x.dims() != std::vector<int64_t>{logical[0], c1, logical[2], logical[3], kC0}) return std::nullopt;
  bool ok = false;
  const nn::ChannelSteps steps = stepsOf(followers, DType::Float, logical, ok);
  if (!ok) return std::nullopt;
  const auto overlaps = [&](const Tensor* t) {
    const auto* p = reinterpret_cast<const uint8_t*>(into.data());
    return t && t->data() < p + into.size_bytes() && p < t->data() + t->byteSize();
  };
  bool inPlace = static_cast<int64_t>(into.size()) == x.numel() && !overlaps(&x);
  for (const ConvFollower& f : followers)
    for (const Tensor* t : f.inputs) inPlace = inPlace && !overlaps(t);
  const std::vector<const Tensor*> operands{&x};
  const KernelContext ctx(*followers.back().node, operands, limits);
  std::optional<nn::Result<float, float>> result;
  if (!inPlace) result.emplace(ctx, DType::Float, x.dims());
  float* y = inPlace ? into.data() : result->data();
  const nn::Operand<float, float> xv(ctx, x);
  for (int64_t b = 0; b < logical[0] * c1; ++b) {
    const int64_t k = b % c1;
    stepsOnBlock(steps, k, std::min(kC0, logical[1] - k * kC0), xv.data() + b * plane * kC0, y + b * plane * kC0,
                 plane);
  }
  return inPlace ? Tensor() : result->finish();
}

std::optional<Tensor> convolveWithFollowers(const Node& conv, const std::vector<const Tensor*>& inputs,
                                            const std::vector<ConvFollower>& followers, const KernelLimits& limits) {
  if (!isOp(conv, "Conv") || inputs.size() < 2 || !inputs[0] || !inputs[1]) return std::nullopt;
  const DType type = inputs[0]->dtype();
  if (type != DType::Float && type != DType::Double) return std::nullopt;
  for (size_t i = 1; i < inputs.size() && i < 3; ++i)
    if (inputs[i] && inputs[i]->dtype() != type) return std::nullopt;
  const KernelContext ctx(conv, inputs, limits);
  const nn::ConvShape s = nn::convShape(ctx, inputs[0]->dims(), inputs[1]->dims(), ctx.input(2));
  bool ok = false;
  const nn::ChannelSteps steps = stepsOf(followers, type, s.outDims, ok);
  if (!ok) return std::nullopt;
  return type == DType::Float ? convolveTyped<float>(ctx, s, steps) : convolveTyped<double>(ctx, s, steps);
}

}  // namespace kiln::kernels
