// Recurrent ONNX ops: RNN, GRU, LSTM (forward, reverse, bidirectional; layout 0 and 1; sequence_lens; clip;
// the activation functions of the spec). Floating types only, computed in double and rounded once on store.
//
// Each direction and batch entry runs its own loop over its own sequence length: steps past sequence_lens[b] are
// never computed, their Y rows stay zero, and Y_h / Y_c hold the state after the last step actually taken (for the
// reverse direction that is time 0, reached from time sequence_lens[b] - 1).
#include <algorithm>
#include <cctype>
#include <cmath>

#include "kernels/kernel_util.h"
#include "ir/graph.h"
#include "ir/shape.h"

namespace kiln::kernels {
namespace {

enum class Cell { Rnn, Gru, Lstm };

int64_t gatesOf(Cell c) { return c == Cell::Rnn ? 1 : c == Cell::Gru ? 3 : 4; }
size_t activationsPerDirection(Cell c) { return c == Cell::Rnn ? 1 : c == Cell::Gru ? 2 : 3; }

struct Activation {
  enum class Kind {
    Sigmoid,
    Tanh,
    Relu,
    HardSigmoid,
    Affine,
    LeakyRelu,
    ThresholdedRelu,
    ScaledTanh,
    Elu,
    Softsign,
    Softplus
  };
  Kind kind = Kind::Sigmoid;
  double alpha = 0, beta = 0;

  double operator()(double x) const {
    switch (kind) {
      case Kind::Sigmoid:
        return 1 / (1 + std::exp(-x));
      case Kind::Tanh:
        return std::tanh(x);
      case Kind::Relu:
        return std::max(x, 0.0);
      case Kind::HardSigmoid:
        return std::clamp(alpha * x + beta, 0.0, 1.0);
      case Kind::Affine:
        return alpha * x + beta;
      case Kind::LeakyRelu:
        return x >= 0 ? x : alpha * x;
      case Kind::ThresholdedRelu:
        return x > alpha ? x : 0.0;
      case Kind::ScaledTanh:
        return alpha * std::tanh(beta * x);
      case Kind::Elu:
        return x >= 0 ? x : alpha * (std::exp(x) - 1);
      case Kind::Softsign:
        return x / (1 + std::fabs(x));
      case Kind::Softplus:
        return x > 30 ? x : std::log1p(std::exp(x));  // log(1 + e^x) without overflow
    }
    return x;
  }
};

struct ActivationName {
  const char* name;
  Activation::Kind kind;
  int params;          // how many of (alpha, beta) it takes from the attribute lists
  double alpha, beta;  // the defaults of the ONNX op of the same name
};

constexpr ActivationName kActivations[] = {
    {"sigmoid", Activation::Kind::Sigmoid, 0, 0, 0},
    {"tanh", Activation::Kind::Tanh, 0, 0, 0},
    {"relu", Activation::Kind::Relu, 0, 0, 0},
    {"hardsigmoid", Activation::Kind::HardSigmoid, 2, 0.2, 0.5},
    {"affine", Activation::Kind::Affine, 2, 1.0, 0.0},
    {"leakyrelu", Activation::Kind::LeakyRelu, 1, 0.01, 0},
    {"thresholdedrelu", Activation::Kind::ThresholdedRelu, 1, 1.0, 0},
    {"scaledtanh", Activation::Kind::ScaledTanh, 2, 1.0, 1.0},
    {"elu", Activation::Kind::Elu, 1, 1.0, 0},
    {"softsign", Activation::Kind::Softsign, 0, 0, 0},
    {"softplus", Activation::Kind::Softplus, 0, 0, 0},
};

template <typename T>
std::vector<T> listAttr(const Node& node, const char* name) {
  const Attribute* a = node.attr(name);
  const std::vector<T>* v = a ? a->get<std::vector<T>>() : nullptr;
  return v ? *v : std::vector<T>{};
}

// The activations of every direction, in the order (f, g, h) forward then (f, g, h) reverse. alpha and beta values
// are taken in order by the functions that have such a parameter (as onnxruntime reads the lists).
std::vector<Activation> activations(const KernelContext& ctx, Cell cell, size_t directions) {
  const size_t per = activationsPerDirection(cell);
  std::vector<std::string> names = listAttr<std::string>(ctx.node(), "activations");
  if (names.empty()) {
    const std::vector<std::string> defaults = cell == Cell::Rnn   ? std::vector<std::string>{"Tanh"}
                                              : cell == Cell::Gru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                                  : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
    for (size_t d = 0; d < directions; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  }
  if (names.size() != per && names.size() != per * directions)
    ctx.fail("activations has " + std::to_string(names.size()) + " entries, expected " +
             std::to_string(per * directions));
  const std::vector<float> alphas = listAttr<float>(ctx.node(), "activation_alpha");
  const std::vector<float> betas = listAttr<float>(ctx.node(), "activation_beta");
  size_t nextAlpha = 0, nextBeta = 0;
  std::vector<Activation> out;
  for (const std::string& name : names) {
    std::string lower = name;
    for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    const auto* it = std::find_if(std::begin(kActivations), std::end(kActivations),
                                  [&](const ActivationName& a) { return lower == a.name; });
    if (it == std::end(kActivations)) ctx.fail("unknown activation '" + name + "'");
    Activation a{it->kind, it->alpha, it->beta};
    if (it->params >= 1 && nextAlpha < alphas.size()) a.alpha = alphas[nextAlpha++];
    if (it->params >= 2 && nextBeta < betas.size()) a.beta = betas[nextBeta++];
    out.push_back(a);
  }
  // One direction's list given for both directions: the reverse one uses the same functions.
  if (out.size() == per && directions == 2) out.insert(out.end(), out.begin(), out.end());
  return out;
}

void expectDims(const KernelContext& ctx, const Tensor& t, const std::vector<int64_t>& want, const char* what) {
  if (t.dims() != want)
    ctx.fail(std::string(what) + " has shape " + Shape::ofStatic(t.dims()).toString() + ", expected " +
             Shape::ofStatic(want).toString());
}

double dot(const double* a, const double* b, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

// Writes doubles into an output of a floating element type.
void storeAll(OutBuffer& out, DType type, const std::vector<double>& v) {
  dispatch<kFloats>(type, [&](auto tag) {
    using S = typename decltype(tag)::type;
    for (int64_t i = 0; i < out.numel(); ++i)
      Elem<S>::store(out.data(), i, static_cast<ComputeOf<S>>(v[static_cast<size_t>(i)]));
  });
}

template <Cell C>
std::vector<Tensor> recurrent(const KernelContext& ctx) {
  const Node& node = ctx.node();
  const Tensor& x = ctx.required(0);
  const Tensor& w = ctx.required(1);
  const Tensor& r = ctx.required(2);
  if (!isFloating(x.dtype())) return {};
  const Tensor* bias = ctx.input(3);
  const Tensor* lens = ctx.input(4);
  const Tensor* h0 = ctx.input(5);
  const Tensor* c0 = C == Cell::Lstm ? ctx.input(6) : nullptr;
  const Tensor* peep = C == Cell::Lstm ? ctx.input(7) : nullptr;
  for (const Tensor* t : {&w, &r, bias, h0, c0, peep})
    if (t && t->dtype() != x.dtype()) ctx.fail("W, R, B, initial_h, initial_c and P must have X's element type");
  const size_t maxOutputs = C == Cell::Lstm ? 3 : 2;
  if (node.numOutputs() > maxOutputs) ctx.fail("at most " + std::to_string(maxOutputs) + " outputs");

  const int64_t layout = node.attrInt("layout", 0);
  if (layout != 0 && layout != 1) ctx.fail("layout must be 0 or 1");
  const std::string direction = node.attrString("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    ctx.fail("unknown direction '" + direction + "'");
  const int64_t dirs = direction == "bidirectional" ? 2 : 1;
  if (x.dims().size() != 3) ctx.fail("X must have rank 3");
  const int64_t seq = x.dims()[layout ? 1 : 0], batch = x.dims()[layout ? 0 : 1], inSize = x.dims()[2];
  const int64_t G = gatesOf(C);
  if (w.dims().size() != 3 || w.dims()[0] != dirs || w.dims()[1] % G != 0 || w.dims()[2] != inSize)
    ctx.fail("W has shape " + Shape::ofStatic(w.dims()).toString() + ", expected [" + std::to_string(dirs) + ", " +
             std::to_string(G) + "*hidden_size, " + std::to_string(inSize) + "]");
  const int64_t H = w.dims()[1] / G;
  if (hasAttr(node, "hidden_size") && node.attrInt("hidden_size", 0) != H) ctx.fail("hidden_size does not match W");
  expectDims(ctx, r, {dirs, G * H, H}, "R");
  if (bias) expectDims(ctx, *bias, {dirs, 2 * G * H}, "B");
  const std::vector<int64_t> stateDims =
      layout ? std::vector<int64_t>{batch, dirs, H} : std::vector<int64_t>{dirs, batch, H};
  if (h0) expectDims(ctx, *h0, stateDims, "initial_h");
  if (c0) expectDims(ctx, *c0, stateDims, "initial_c");
  if (peep) expectDims(ctx, *peep, {dirs, 3 * H}, "P");
  std::vector<int64_t> seqLens(static_cast<size_t>(batch), seq);
  if (lens) {
    seqLens = intValues(ctx, *lens, "sequence_lens");
    if (static_cast<int64_t>(seqLens.size()) != batch) ctx.fail("sequence_lens must have one entry per batch row");
    for (int64_t l : seqLens)
      if (l < 0 || l > seq)
        ctx.fail("sequence length " + std::to_string(l) + " outside [0, " + std::to_string(seq) + "]");
  }
  const double clip = node.attrFloat("clip", INFINITY);
  if (!(clip >= 0)) ctx.fail("clip must be a non-negative number");
  const bool linearBeforeReset = node.attrInt("linear_before_reset", 0) != 0;
  const bool coupled = node.attrInt("input_forget", 0) != 0;
  const std::vector<Activation> act = activations(ctx, C, static_cast<size_t>(dirs));
  const size_t perDir = activationsPerDirection(C);

  OutBuffer y(ctx, x.dtype(),
              layout ? std::vector<int64_t>{batch, seq, dirs, H} : std::vector<int64_t>{seq, dirs, batch, H});
  OutBuffer yh(ctx, x.dtype(), stateDims);
  OutBuffer yc(ctx, x.dtype(), stateDims);
  checkScratch(ctx, y.numel() + 2 * yh.numel() + 3 * G * H, 8);
  std::vector<double> yv(static_cast<size_t>(y.numel())), hv(static_cast<size_t>(yh.numel())), cv(hv.size());
  const std::vector<double> xv = x.toDouble(), wv = w.toDouble(), rv = r.toDouble();
  const std::vector<double> bv = bias ? bias->toDouble() : std::vector<double>(static_cast<size_t>(dirs * 2 * G * H));
  const std::vector<double> h0v = h0 ? h0->toDouble() : std::vector<double>(hv.size());
  const std::vector<double> c0v = c0 ? c0->toDouble() : std::vector<double>(hv.size());
  const std::vector<double> pv = peep ? peep->toDouble() : std::vector<double>(static_cast<size_t>(dirs * 3 * H));

  const auto xAt = [&](int64_t t, int64_t b) { return xv.data() + (layout ? b * seq + t : t * batch + b) * inSize; };
  const auto yAt = [&](int64_t t, int64_t d, int64_t b) {
    return (layout ? (b * seq + t) * dirs + d : (t * dirs + d) * batch + b) * H;
  };
  const auto stateAt = [&](int64_t d, int64_t b) {
    return static_cast<size_t>((layout ? b * dirs + d : d * batch + b) * H);
  };
  const auto clipped = [clip](double v) { return std::clamp(v, -clip, clip); };
  const auto uH = static_cast<size_t>(H);
  std::vector<double> h(uH), c(uH), xw(static_cast<size_t>(G * H)), hr(xw.size()), hNext(uH), update(uH), reset(uH),
      gated(uH);

  for (int64_t d = 0; d < dirs; ++d) {
    const bool reverse = direction == "reverse" || d == 1;
    const double* W = wv.data() + d * G * H * inSize;
    const double* R = rv.data() + d * G * H * H;
    const double* Wb = bv.data() + d * 2 * G * H;
    const double* Rb = Wb + G * H;
    const double* P = pv.data() + d * 3 * H;
    const Activation* f = act.data() + static_cast<size_t>(d) * perDir;
    for (int64_t b = 0; b < batch; ++b) {
      std::copy_n(h0v.begin() + static_cast<std::ptrdiff_t>(stateAt(d, b)), H, h.begin());
      std::copy_n(c0v.begin() + static_cast<std::ptrdiff_t>(stateAt(d, b)), H, c.begin());
      const int64_t len = seqLens[static_cast<size_t>(b)];
      for (int64_t s = 0; s < len; ++s) {
        const int64_t t = reverse ? len - 1 - s : s;
        const double* xt = xAt(t, b);
        for (int64_t k = 0; k < G * H; ++k) {
          xw[static_cast<size_t>(k)] = Wb[k] + dot(W + k * inSize, xt, inSize);
          hr[static_cast<size_t>(k)] = Rb[k] + dot(R + k * H, h.data(), H);
        }
        for (size_t j = 0; j < uH; ++j) {
          if constexpr (C == Cell::Rnn) {
            hNext[j] = f[0](clipped(xw[j] + hr[j]));
          } else if constexpr (C == Cell::Gru) {  // gates z, r, h
            update[j] = f[0](clipped(xw[j] + hr[j]));
            reset[j] = f[0](clipped(xw[uH + j] + hr[uH + j]));
            if (linearBeforeReset) hr[2 * uH + j] *= reset[j];
          } else {  // gates i, o, f, c; P holds i, o, f
            const double in = f[0](clipped(xw[j] + hr[j] + P[j] * c[j]));
            const double forget =
                coupled ? 1 - in : f[0](clipped(xw[2 * uH + j] + hr[2 * uH + j] + P[2 * uH + j] * c[j]));
            const double cand = f[1](clipped(xw[3 * uH + j] + hr[3 * uH + j]));
            c[j] = forget * c[j] + in * cand;
            const double out = f[0](clipped(xw[uH + j] + hr[uH + j] + P[uH + j] * c[j]));
            hNext[j] = out * f[2](c[j]);
          }
        }
        if constexpr (C == Cell::Gru) {
          if (!linearBeforeReset) {  // the candidate sees R_h (r ⊙ H_{t-1}) + Rb_h
            for (size_t j = 0; j < uH; ++j) gated[j] = reset[j] * h[j];
            for (int64_t k = 0; k < H; ++k)
              hr[2 * uH + static_cast<size_t>(k)] = Rb[2 * H + k] + dot(R + (2 * H + k) * H, gated.data(), H);
          }
          for (size_t j = 0; j < uH; ++j) {
            const double cand = f[1](clipped(xw[2 * uH + j] + hr[2 * uH + j]));
            hNext[j] = (1 - update[j]) * cand + update[j] * h[j];
          }
        }
        h = hNext;
        std::copy(h.begin(), h.end(), yv.begin() + yAt(t, d, b));
      }
      std::copy(h.begin(), h.end(), hv.begin() + static_cast<std::ptrdiff_t>(stateAt(d, b)));
      std::copy(c.begin(), c.end(), cv.begin() + static_cast<std::ptrdiff_t>(stateAt(d, b)));
    }
  }
  storeAll(y, x.dtype(), yv);
  storeAll(yh, x.dtype(), hv);
  storeAll(yc, x.dtype(), cv);
  std::vector<Tensor> out{y.finish(), yh.finish(), yc.finish()};
  out.resize(node.numOutputs());
  return out;
}

}  // namespace

void registerRecurrentKernels(KernelRegistry& r) {
  r.add("RNN", recurrent<Cell::Rnn>);
  r.add("GRU", recurrent<Cell::Gru>);
  r.add("LSTM", recurrent<Cell::Lstm>);
}

}  // namespace kiln::kernels
