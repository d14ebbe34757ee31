// Fused Vector ops, computed in double and rounded once into the input's type (floating types only):
//  - Kiln's (ir/opdefs/kiln_fused_ops.cpp): Gelu, LayerNorm, RmsNorm, AddLayerNorm, AddRmsNorm. They give the fusion
//    rules a numeric check (the fused graph against the written-out one) and the emulator its functional meaning;
//  - the ones ONNX Runtime's exporters and optimizers write (com.microsoft Gelu, BiasGelu, FastGelu,
//    SkipLayerNormalization, SkipSimplifiedLayerNormalization, EmbedLayerNormalization, and
//    SimplifiedLayerNormalization in the default domain), so models optimized for ONNX Runtime run in the emulator.
#include <cmath>
#include <cstring>
#include <optional>
#include <numbers>

#include "kernels/cast_rounding.h"
#include "kernels/kernel_util.h"
#include "ir/graph.h"

namespace kiln::kernels {
namespace {

Tensor inTypeOf(const Tensor& like, const std::vector<double>& v) {
  return convertTensor(Tensor::fromVector(DType::Double, like.dims(), v), like.dtype());
}

enum class GeluForm { FromAttribute, Erf, Tanh };

template <GeluForm Form>
std::vector<Tensor> gelu(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  if (!isFloating(x.dtype())) return {};
  const bool tanhForm = Form == GeluForm::Tanh ||
                        (Form == GeluForm::FromAttribute && ctx.node().attrString("approximate", "none") == "tanh");
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
// Each row's mean and 1/sqrt(var + eps) (mean 0 for RmsNorm), when the node asks for them.
struct RowStats {
  std::vector<double> mean, invStd;
};

void normalise(const KernelContext& ctx, std::vector<double>& x, int64_t rowSize, const Tensor* scale,
               const Tensor* bias, bool centred, double eps, RowStats* stats = nullptr) {
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
    if (stats) {
      stats->mean.push_back(mean);
      stats->invStd.push_back(inv);
    }
    for (size_t i = 0; i < n; ++i) r[i] = (r[i] - mean) * inv * at(g, i, 1.0) + at(b, i, 0.0);
  }
}

// How B's elements line up with A's when B broadcasts into A (right-aligned): the same element (B has A's shape up
// to leading ones), the same element of every row of `rowSize` trailing elements, or some other walk.
enum class AddendWalk { Elementwise, PerRow, Other };

AddendWalk addendWalk(const std::vector<int64_t>& ad, const std::vector<int64_t>& bd, int64_t rowSize) {
  if (bd.size() > ad.size()) return AddendWalk::Other;
  const size_t lead = ad.size() - bd.size();
  int64_t bNumel = 1;
  for (size_t i = 0; i < bd.size(); ++i) {
    if (bd[i] != 1 && bd[i] != ad[i + lead]) return AddendWalk::Other;
    bNumel *= bd[i];
  }
  int64_t aNumel = 1;
  for (int64_t d : ad) aNumel *= d;
  if (bNumel == aNumel) return AddendWalk::Elementwise;  // every extent matches where either is not 1
  int64_t tail = 1;
  for (size_t i = ad.size(); i-- > 0 && tail < rowSize;) tail *= ad[i];
  // B covers the row's extents exactly and nothing before it: every row reads B from its start.
  return tail == rowSize && bNumel == rowSize ? AddendWalk::PerRow : AddendWalk::Other;
}

// A row of n elements of `type` (fp32 or fp16) at p, widened into r (as Tensor::toDouble would).
void widenRow(DType type, const uint8_t* p, size_t n, std::vector<float>& narrow, std::vector<uint16_t>& halves,
              double* r) {
  if (type == DType::Float16) {
    std::memcpy(halves.data(), p, n * sizeof(uint16_t));
    halvesToFloats(halves.data(), narrow.data(), n);
  } else {
    std::memcpy(narrow.data(), p, n * sizeof(float));
  }
  for (size_t i = 0; i < n; ++i) r[i] = narrow[i];
}

// r rounded into n elements of `type` at p, as convertTensor rounds doubles.
void storeRow(DType type, const double* r, size_t n, std::vector<float>& narrow, std::vector<uint16_t>& halves,
              uint8_t* p) {
  if (type == DType::Float16) {
    roundDoublesToHalves(r, halves.data(), n);
    std::memcpy(p, halves.data(), n * sizeof(uint16_t));
  } else {
    for (size_t i = 0; i < n; ++i) narrow[i] = static_cast<float>(r[i]);
    std::memcpy(p, narrow.data(), n * sizeof(float));
  }
}

// The norms on fp32 or fp16 rows, one row at a time in a double buffer: the same arithmetic, in the same order, as
// addInto + normalise over the whole tensor (so the same bits), without a double copy of every operand.
// Returns false where B's broadcast is not one of the two walks rows can take.
template <bool Centred, bool WithAdd>
bool normRows(const KernelContext& ctx, int64_t rowSize, std::vector<Tensor>& out) {
  const Tensor& a = ctx.required(0);
  const DType type = a.dtype();
  const Tensor* addend = WithAdd ? &ctx.required(1) : nullptr;
  AddendWalk walk = AddendWalk::Elementwise;
  if (addend && (walk = addendWalk(a.dims(), addend->dims(), rowSize)) == AddendWalk::Other) return false;
  const size_t first = WithAdd ? 2 : 1;
  const Tensor* scale = ctx.input(first);
  const Tensor* bias = Centred ? ctx.input(first + 1) : nullptr;
  const auto param = [&](const Tensor* t, double none) {
    std::vector<double> v = t ? t->toDouble() : std::vector<double>{};
    if (t && v.size() != 1 && static_cast<int64_t>(v.size()) != rowSize) ctx.fail("a parameter does not fit the row");
    // One value per element of the row, 1 and 0 where absent: x * 1.0 + 0.0 as normalise computes it.
    if (v.size() <= 1) v.assign(static_cast<size_t>(rowSize), v.empty() ? none : v[0]);
    return v;
  };
  const std::vector<double> g = param(scale, 1.0), b = param(bias, 0.0);
  const double eps = ctx.node().attrFloat("epsilon", 1e-5f);
  const bool wantSum = WithAdd && ctx.node().numOutputs() > 1;
  OutBuffer y(ctx, type, a.dims(), HeapStorage::Start::Unset);
  std::optional<OutBuffer> sum;
  if (wantSum) sum.emplace(ctx, type, a.dims(), HeapStorage::Start::Unset);
  const auto n = static_cast<size_t>(rowSize);
  const size_t bytes = n * dtypeSize(type);
  std::vector<double> r(n), other(n);
  std::vector<float> narrow(n);
  std::vector<uint16_t> halves(n);
  const uint8_t* src = a.data();
  const uint8_t* add = addend ? addend->data() : nullptr;
  const size_t rows = n ? static_cast<size_t>(a.numel()) / n : 0;
  for (size_t k = 0; k < rows; ++k) {
    widenRow(type, src + k * bytes, n, narrow, halves, r.data());
    if (add) {
      widenRow(type, add + (walk == AddendWalk::PerRow ? 0 : k * bytes), n, narrow, halves, other.data());
      for (size_t i = 0; i < n; ++i) r[i] += other[i];
      if (wantSum) storeRow(type, r.data(), n, narrow, halves, sum->data() + k * bytes);
    }
    double mean = 0, sq = 0;
    for (size_t i = 0; i < n; ++i) mean += r[i];
    mean = Centred ? mean / static_cast<double>(n) : 0.0;
    for (size_t i = 0; i < n; ++i) sq += (r[i] - mean) * (r[i] - mean);
    const double inv = 1.0 / std::sqrt(sq / static_cast<double>(n) + eps);
    for (size_t i = 0; i < n; ++i) r[i] = (r[i] - mean) * inv * g[i] + b[i];
    storeRow(type, r.data(), n, narrow, halves, y.data() + k * bytes);
  }
  out.push_back(y.finish());
  if (wantSum) out.push_back(sum->finish());
  return true;
}

template <bool Centred, bool WithAdd>
std::vector<Tensor> norm(const KernelContext& ctx) {
  const Tensor& a = ctx.required(0);
  if (!isFloating(a.dtype()) || (WithAdd && !isFloating(ctx.required(1).dtype()))) return {};
  const bool rowsFit = a.dtype() == DType::Float || a.dtype() == DType::Float16;
  if (rowsFit && (!WithAdd || ctx.required(1).dtype() == a.dtype())) {
    const auto rank = static_cast<int64_t>(a.dims().size());
    const int64_t axis = normalizeAxis(ctx, ctx.node().attrInt("axis", -1), rank, "axis");
    int64_t rowSize = 1;
    for (auto d = static_cast<size_t>(axis); d < a.dims().size(); ++d) rowSize *= a.dims()[d];
    std::vector<Tensor> out;
    if (normRows<Centred, WithAdd>(ctx, rowSize, out)) return out;
  }
  std::vector<double> x = WithAdd ? addInto(ctx, a, ctx.required(1)) : a.toDouble();
  const auto rank = static_cast<int64_t>(a.dims().size());
  const int64_t axis = normalizeAxis(ctx, ctx.node().attrInt("axis", -1), rank, "axis");
  int64_t rowSize = 1;
  for (auto d = static_cast<size_t>(axis); d < a.dims().size(); ++d) rowSize *= a.dims()[d];
  std::vector<Tensor> out;
  const Tensor sum = inTypeOf(a, x);
  const size_t first = WithAdd ? 2 : 1;
  normalise(ctx, x, rowSize, ctx.input(first), Centred ? ctx.input(first + 1) : nullptr, Centred,
            ctx.node().attrFloat("epsilon", 1e-5f));
  out.push_back(inTypeOf(a, x));
  if (WithAdd && ctx.node().numOutputs() > 1) out.push_back(sum);
  return out;
}

// The per-row statistics as the optional outputs ONNX Runtime's norms have: [..., 1] over the normalised rows, fp32
// (their type U) unless the input is double.
Tensor statsTensor(const Tensor& x, int64_t axis, const std::vector<double>& v) {
  std::vector<int64_t> dims(x.dims().begin(), x.dims().begin() + axis);
  dims.resize(x.dims().size(), 1);
  const DType t = x.dtype() == DType::Double ? DType::Double : DType::Float;
  return convertTensor(Tensor::fromVector(DType::Double, dims, v), t);
}

// SimplifiedLayerNormalization(X, scale) -> Y [, inv_std_var]: RmsNorm over [axis, rank).
std::vector<Tensor> simplifiedLayerNorm(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  if (!isFloating(x.dtype())) return {};
  const auto rank = static_cast<int64_t>(x.dims().size());
  const int64_t axis = normalizeAxis(ctx, ctx.node().attrInt("axis", -1), rank, "axis");
  int64_t rowSize = 1;
  for (auto d = static_cast<size_t>(axis); d < x.dims().size(); ++d) rowSize *= x.dims()[d];
  std::vector<double> v = x.toDouble();
  RowStats stats;
  normalise(ctx, v, rowSize, &ctx.required(1), nullptr, false, ctx.node().attrFloat("epsilon", 1e-5f), &stats);
  std::vector<Tensor> out{inTypeOf(x, v)};
  if (ctx.node().numOutputs() > 1) out.push_back(statsTensor(x, axis, stats.invStd));
  return out;
}

// Skip(Simplified)LayerNormalization(input, skip, gamma [, beta], [bias]) -> output, mean, inv_std_var,
// input_skip_bias_sum: the norm of input + skip + bias over the last axis (epsilon defaults to 1e-12 there).
template <bool Centred>
std::vector<Tensor> skipNorm(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  const Tensor& skip = ctx.required(1);
  if (!isFloating(x.dtype()) || !isFloating(skip.dtype()) || x.dims().empty()) return {};
  std::vector<double> sum = addInto(ctx, x, skip);
  const Tensor* gamma = &ctx.required(2);
  const Tensor* beta = Centred ? ctx.input(3) : nullptr;
  if (const Tensor* bias = ctx.input(Centred ? 4 : 3)) {
    const std::vector<double> b = bias->toDouble();
    if (static_cast<int64_t>(b.size()) != x.dims().back()) ctx.fail("bias does not fit the hidden size");
    for (size_t i = 0; i < sum.size(); ++i) sum[i] += b[i % b.size()];
  }
  const Tensor sumTensor = inTypeOf(x, sum);
  RowStats stats;
  normalise(ctx, sum, x.dims().back(), gamma, beta, Centred, ctx.node().attrFloat("epsilon", 1e-12f), &stats);
  const auto axis = static_cast<int64_t>(x.dims().size()) - 1;
  std::vector<Tensor> out{inTypeOf(x, sum)};
  const size_t outputs = ctx.node().numOutputs();
  if (outputs > 1) out.push_back(statsTensor(x, axis, stats.mean));
  if (outputs > 2) out.push_back(statsTensor(x, axis, stats.invStd));
  if (outputs > 3) out.push_back(sumTensor);
  return out;
}

// EmbedLayerNormalization(input_ids, segment_ids, word_embedding, position_embedding, segment_embedding, gamma,
// beta [, mask [, position_ids]]) -> output [B, S, H], mask_index [B] (int32: the mask's ones per row, or S),
// embedding_sum: LayerNorm of the three looked-up embeddings.
std::vector<Tensor> embedLayerNorm(const KernelContext& ctx) {
  const Tensor& ids = ctx.required(0);
  const Tensor& words = ctx.required(2);
  const Tensor& positions = ctx.required(3);
  if (ids.dims().size() != 2 || words.dims().size() != 2 || positions.dims().size() != 2)
    ctx.fail("input_ids must be [batch, sequence] and the embeddings [rows, hidden]");
  if (!isFloating(words.dtype())) return {};
  const int64_t batch = ids.dims()[0], seq = ids.dims()[1], hidden = words.dims()[1];
  const Tensor* segmentIds = ctx.input(1);
  const Tensor* segments = ctx.input(4);
  const Tensor* mask = ctx.input(7);
  const Tensor* positionIds = ctx.input(8);
  if (positions.dims()[1] != hidden || (segments && segments->dims().size() != 2) ||
      (segments && segments->dims()[1] != hidden))
    ctx.fail("the embeddings disagree on the hidden size");
  const std::vector<int64_t> idv = ids.toInt64();
  const std::vector<int64_t> segv = segmentIds ? segmentIds->toInt64() : std::vector<int64_t>{};
  const std::vector<int64_t> posv = positionIds ? positionIds->toInt64() : std::vector<int64_t>{};
  if ((segmentIds && int64_t(segv.size()) != batch * seq) ||
      (positionIds && int64_t(posv.size()) != batch * seq && int64_t(posv.size()) != seq))
    ctx.fail("segment_ids / position_ids do not match input_ids");
  if (!isFloating(positions.dtype()) || (segments && !isFloating(segments->dtype())))
    ctx.fail("the embeddings must be of floating types");
  checkScratch(ctx, batch * seq * hidden, 8);
  std::vector<double> sum(static_cast<size_t>(batch * seq * hidden));
  // Only the rows looked up are read, where they lie (the whole tables converted to double cost a small decoder's
  // run a fifth of its time).
  std::vector<double> wr(static_cast<size_t>(hidden)), pr(wr.size()), sr(wr.size());
  auto row = [&](const Tensor& table, int64_t index, const char* what, std::vector<double>& into) {
    if (index < 0 || index >= table.dims()[0])
      ctx.fail(std::string(what) + " index " + std::to_string(index) + " is out of range");
    const uint8_t* const data = table.data();
    dispatch<kFloats>(table.dtype(), [&](auto tag) {
      using S = typename decltype(tag)::type;
      for (int64_t h = 0; h < hidden; ++h) into[size_t(h)] = static_cast<double>(Elem<S>::load(data, index * hidden + h));
    });
  };
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t s = 0; s < seq; ++s) {
      const int64_t t = b * seq + s;
      row(words, idv[size_t(t)], "input_ids", wr);
      const int64_t pos = posv.empty() ? s : posv[size_t(int64_t(posv.size()) == seq ? s : t)];
      row(positions, pos, "position_ids", pr);
      if (segments) row(*segments, segv.empty() ? 0 : segv[size_t(t)], "segment_ids", sr);
      for (int64_t h = 0; h < hidden; ++h)
        sum[size_t(t * hidden + h)] = wr[size_t(h)] + pr[size_t(h)] + (segments ? sr[size_t(h)] : 0.0);
    }
  const std::vector<int64_t> outDims{batch, seq, hidden};
  const Tensor embeddingSum = convertTensor(Tensor::fromVector(DType::Double, outDims, sum), words.dtype());
  normalise(ctx, sum, hidden, &ctx.required(5), ctx.input(6), true, ctx.node().attrFloat("epsilon", 1e-12f));
  std::vector<Tensor> out{convertTensor(Tensor::fromVector(DType::Double, outDims, sum), words.dtype())};
  std::vector<int32_t> maskIndex(static_cast<size_t>(batch), static_cast<int32_t>(seq));
  if (mask) {
    const std::vector<int64_t> m = mask->toInt64();
    if (int64_t(m.size()) != batch * seq) ctx.fail("mask does not match input_ids");
    for (int64_t b = 0; b < batch; ++b) {
      int32_t ones = 0;
      for (int64_t s = 0; s < seq; ++s) ones += m[size_t(b * seq + s)] != 0;
      maskIndex[size_t(b)] = ones;
    }
  }
  out.push_back(Tensor::fromVector(DType::Int32, {batch}, maskIndex));
  if (ctx.node().numOutputs() > 2) out.push_back(embeddingSum);
  return out;
}

}  // namespace

void registerFusedKernels(KernelRegistry& r) {
  r.add("Gelu", gelu<GeluForm::FromAttribute>, "kiln");
  r.add("Gelu", gelu<GeluForm::FromAttribute>);  // ai.onnx Gelu-20: approximate "none" or "tanh", no bias
  r.add("Gelu", gelu<GeluForm::Erf>, "com.microsoft");
  r.add("BiasGelu", gelu<GeluForm::Erf>, "com.microsoft");
  r.add("FastGelu", gelu<GeluForm::Tanh>, "com.microsoft");
  r.add("SimplifiedLayerNormalization", simplifiedLayerNorm);
  r.add("SkipLayerNormalization", skipNorm<true>, "com.microsoft");
  r.add("SkipSimplifiedLayerNormalization", skipNorm<false>, "com.microsoft");
  r.add("EmbedLayerNormalization", embedLayerNorm, "com.microsoft");
  r.add("LayerNorm", norm<true, false>, "kiln");
  r.add("RmsNorm", norm<false, false>, "kiln");
  r.add("AddLayerNorm", norm<true, true>, "kiln");
  r.add("AddRmsNorm", norm<false, true>, "kiln");
}

}  // namespace kiln::kernels
