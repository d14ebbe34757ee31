// The attention ops ONNX Runtime's transformer optimizer and exporters write (domain com.microsoft), so models
// optimized for ONNX Runtime run in the emulator:
//   Attention(input, weights [, bias, mask_index, past, attention_bias])    QKV projection + attention, present
//   MultiHeadAttention(query, key, value [, bias, key_padding_mask, attention_bias, past_key, past_value])
//   RotaryEmbedding(input, position_ids, cos_cache, sin_cache)               rotary position embedding
// Computed in double, rounded once into the input's type. Forms the CPU provider refuses too (packed QKV in
// MultiHeadAttention's query, Megatron 4-D masks, do_rotary) throw with the reason instead of guessing.
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>

#include "kernels/cast_rounding.h"
#include "kernels/kernel_util.h"
#include "ir/graph.h"

namespace kiln::kernels {
namespace {

// n doubles stored as `t` (with Cast's rounding) into `out` from element `at`.
void narrowInto(DType t, const double* v, size_t n, uint8_t* out, size_t at) {
  if (t == DType::Float) {
    for (size_t i = 0; i < n; ++i) Elem<float>::store(out, int64_t(at + i), static_cast<float>(v[i]));
  } else if (t == DType::Double) {
    std::memcpy(out + at * sizeof(double), v, n * sizeof(double));
  } else if (t == DType::Float16) {
    roundDoublesToHalves(v, reinterpret_cast<uint16_t*>(out) + at, n);
  } else {
    const Tensor narrow = convertTensor(Tensor::fromVector(DType::Double, {int64_t(n)}, std::vector<double>(v, v + n)), t);
    std::memcpy(out + at * dtypeSize(t), narrow.data(), narrow.byteSize());
  }
}

// The doubles of `parts`, one after the other, as one tensor of type t (the outputs are written straight into
// their storage: an attention with a 128-token past spent most of its time copying and converting it).
Tensor typed(DType t, std::vector<int64_t> dims, std::initializer_list<const std::vector<double>*> parts) {
  size_t n = 0;
  for (const std::vector<double>* p : parts) n += p->size();
  auto storage = std::make_shared<HeapStorage>(n * dtypeSize(t), HeapStorage::Start::Unset);
  size_t at = 0;
  for (const std::vector<double>* p : parts) {
    narrowInto(t, p->data(), p->size(), storage->data(), at);
    at += p->size();
  }
  return Tensor(t, std::move(dims), std::move(storage));
}

// Elements [from, from + n) of a floating tensor as doubles, appended to `out`.
void appendDoubles(const Tensor& t, int64_t from, int64_t n, std::vector<double>& out) {
  const size_t at = out.size();
  out.resize(at + static_cast<size_t>(n));
  double* const dst = out.data() + at;
  const uint8_t* const p = t.data();
  dispatch<kFloats>(t.dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<double>(Elem<S>::load(p, from + i));
  });
}

// Heads in [B, N, T, H] order, the layout both ops attend in.
struct Heads {
  int64_t batch = 0, heads = 0, length = 0, size = 0;
  std::vector<double> v;
  double at(int64_t b, int64_t n, int64_t t, int64_t h) const {
    return v[size_t(((b * heads + n) * length + t) * size + h)];
  }
};

// [B, T, N·H] (+ bias slice at `biasOffset`) split into heads.
Heads splitHeads(const KernelContext& ctx, const std::vector<double>& x, int64_t batch, int64_t length,
                 int64_t heads, int64_t size, const std::vector<double>* bias, int64_t biasOffset) {
  checkScratch(ctx, batch * heads * length * size, 8);
  Heads h{batch, heads, length, size, std::vector<double>(size_t(batch * heads * length * size))};
  const int64_t width = heads * size;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t t = 0; t < length; ++t)
      for (int64_t n = 0; n < heads; ++n)
        for (int64_t i = 0; i < size; ++i) {
          double e = x[size_t((b * length + t) * width + n * size + i)];
          if (bias) e += (*bias)[size_t(biasOffset + n * size + i)];
          h.v[size_t(((b * heads + n) * length + t) * size + i)] = e;
        }
  return h;
}

// past [B, N, P, H] (the elements of `past` from `offset`, in its own type) followed by cur [B, N, T, H] along the
// sequence.
Heads concatPast(const Tensor& past, int64_t offset, int64_t pastLength, const Heads& cur) {
  if (pastLength == 0) return cur;
  Heads out{cur.batch, cur.heads, pastLength + cur.length, cur.size, {}};
  out.v.reserve(size_t(out.batch * out.heads * out.length * out.size));
  for (int64_t b = 0; b < cur.batch; ++b)
    for (int64_t n = 0; n < cur.heads; ++n) {
      appendDoubles(past, offset + (b * cur.heads + n) * pastLength * cur.size, pastLength * cur.size, out.v);
      const auto c0 = cur.v.begin() + (b * cur.heads + n) * cur.length * cur.size;
      out.v.insert(out.v.end(), c0, c0 + cur.length * cur.size);
    }
  return out;
}

// An additive term per (batch, head, query, key): masks and attention_bias, -inf-free (mask_filter_value).
using ScoreBias = std::function<double(int64_t b, int64_t n, int64_t i, int64_t j)>;

// softmax(Q Kᵀ · scale + bias) V, heads merged: [B, S, N·Hv].
std::vector<double> attend(const Heads& q, const Heads& k, const Heads& v, double scale, const ScoreBias& bias) {
  const int64_t B = q.batch, N = q.heads, S = q.length, T = k.length, Hv = v.size;
  std::vector<double> out(size_t(B * S * N * Hv), 0.0);
  std::vector<double> row(static_cast<size_t>(T));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t n = 0; n < N; ++n)
      for (int64_t i = 0; i < S; ++i) {
        double best = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < T; ++j) {
          double dot = 0;
          for (int64_t h = 0; h < q.size; ++h) dot += q.at(b, n, i, h) * k.at(b, n, j, h);
          row[size_t(j)] = dot * scale + bias(b, n, i, j);
          best = std::max(best, row[size_t(j)]);
        }
        double total = 0;
        for (double& e : row) total += (e = std::exp(e - best));
        for (int64_t j = 0; j < T; ++j)
          for (int64_t h = 0; h < Hv; ++h)
            out[size_t(((b * S + i) * N + n) * Hv + h)] += row[size_t(j)] / total * v.at(b, n, j, h);
      }
  return out;
}

// attention_bias [B|1, N|1, S, T] as a lookup.
ScoreBias attentionBias(const KernelContext& ctx, const Tensor* t, int64_t B, int64_t N, int64_t S, int64_t T) {
  if (!t) return [](int64_t, int64_t, int64_t, int64_t) { return 0.0; };
  const auto& d = t->dims();
  if (d.size() != 4 || (d[0] != 1 && d[0] != B) || (d[1] != 1 && d[1] != N) || d[2] != S || d[3] != T)
    ctx.fail("attention_bias must be [batch or 1, heads or 1, " + std::to_string(S) + ", " + std::to_string(T) + "]");
  auto v = std::make_shared<std::vector<double>>(t->toDouble());
  const int64_t bs = d[0] == 1 ? 0 : d[1] * S * T, ns = d[1] == 1 ? 0 : S * T;
  return [v, bs, ns, T](int64_t b, int64_t n, int64_t i, int64_t j) { return (*v)[size_t(b * bs + n * ns + i * T + j)]; };
}

// Keys a mask hides, from the forms ONNX Runtime accepts: [B] end positions, [2B] ends then starts, [B, T] 0/1
// per key, [B, S, T] 0/1 per query and key. `pastLength` offsets the causal rule.
ScoreBias maskBias(const KernelContext& ctx, const Tensor* mask, int64_t B, int64_t S, int64_t T, bool causal,
                   int64_t pastLength, ScoreBias inner) {
  const double filter = ctx.node().attrFloat("mask_filter_value", -10000.0f);
  std::shared_ptr<std::vector<int64_t>> m;
  int form = 0;  // 0 none, 1 ends, 2 ends+starts, 3 per key, 4 per query and key
  if (mask) {
    m = std::make_shared<std::vector<int64_t>>(mask->toInt64());
    const auto& d = mask->dims();
    if (d.size() == 1 && d[0] == B) form = 1;
    else if (d.size() == 1 && d[0] == 2 * B) form = 2;
    else if (d.size() == 2 && d[0] == B && d[1] == T) form = 3;
    else if (d.size() == 3 && d[0] == B && d[1] == S && d[2] == T) form = 4;
    else ctx.fail("mask of shape " + Shape::ofStatic(d).toString() + " is not a form the emulator knows");
  }
  return [=](int64_t b, int64_t n, int64_t i, int64_t j) {
    bool hidden = causal && j > pastLength + i;
    if (form == 1) hidden = hidden || j >= (*m)[size_t(b)];
    if (form == 2) hidden = hidden || j >= (*m)[size_t(b)] || j < (*m)[size_t(B + b)];
    if (form == 3) hidden = hidden || (*m)[size_t(b * T + j)] == 0;
    if (form == 4) hidden = hidden || (*m)[size_t((b * S + i) * T + j)] == 0;
    return inner(b, n, i, j) + (hidden ? filter : 0.0);
  };
}

double scaleFor(const KernelContext& ctx, int64_t headSize) {
  const double s = ctx.node().attrFloat("scale", 0.0f);
  return s != 0.0 ? s : 1.0 / std::sqrt(double(headSize));
}

int64_t numHeads(const KernelContext& ctx, int64_t width) {
  const int64_t n = ctx.node().attrInt("num_heads", 0);
  if (n <= 0 || width % n != 0)
    ctx.fail("num_heads " + std::to_string(n) + " does not divide the hidden size " + std::to_string(width));
  return n;
}

// Heads back to [2, B, N, T, H] (Attention's present: keys, then values) or [B, N, T, H] (MultiHeadAttention's
// present_key/value).
Tensor presentOf(DType t, const Heads& h, const Heads* values = nullptr) {
  std::vector<int64_t> dims{h.batch, h.heads, h.length, h.size};
  if (!values) return typed(t, dims, {&h.v});
  dims.insert(dims.begin(), 2);
  return typed(t, dims, {&h.v, &values->v});
}

std::vector<Tensor> attention(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  const Tensor& w = ctx.required(1);
  if (!isFloating(x.dtype())) return {};
  if (ctx.node().attrInt("do_rotary", 0)) ctx.fail("do_rotary is not emulated");
  if (x.dims().size() != 3 || w.dims().size() != 2 || w.dims()[0] != x.dims()[2])
    ctx.fail("input must be [batch, sequence, hidden] and weights [hidden, q + k + v]");
  const int64_t B = x.dims()[0], S = x.dims()[1], in = x.dims()[2];
  std::vector<int64_t> sizes = ctx.node().attrInts("qkv_hidden_sizes");
  if (sizes.empty()) sizes.assign(3, w.dims()[1] / 3);
  if (sizes.size() != 3 || sizes[0] != sizes[1] || sizes[0] + sizes[1] + sizes[2] != w.dims()[1])
    ctx.fail("qkv_hidden_sizes do not add up to the weights' width");
  const int64_t N = numHeads(ctx, sizes[0]);
  if (sizes[2] % N) ctx.fail("num_heads does not divide the value hidden size");
  // The projection [B·S, in] × [in, q+k+v].
  // The weights read where they are (converting them to double every run cost more than the product).
  if (!isFloating(w.dtype())) ctx.fail("weights must be of a floating type");
  const std::vector<double> xv = x.toDouble();
  const int64_t width = w.dims()[1];
  checkScratch(ctx, B * S * width, 8);
  std::vector<double> qkv(size_t(B * S * width), 0.0);
  const uint8_t* const wp = w.data();
  dispatch<kFloats>(w.dtype(), [&](auto tag) {
    using W = typename decltype(tag)::type;
    for (int64_t r = 0; r < B * S; ++r) {
      double* const row = qkv.data() + r * width;
      for (int64_t c = 0; c < in; ++c) {
        const double a = xv[size_t(r * in + c)];
        for (int64_t o = 0; o < width; ++o) row[o] += a * static_cast<double>(Elem<W>::load(wp, c * width + o));
      }
    }
  });
  std::vector<double> bias;
  if (const Tensor* b = ctx.input(2)) {
    bias = b->toDouble();
    if (int64_t(bias.size()) != width) ctx.fail("bias does not match the weights' width");
  }
  // Q, K, V are column blocks of the projection.
  auto block = [&](int64_t offset, int64_t size) {
    std::vector<double> out(size_t(B * S * size));
    for (int64_t r = 0; r < B * S; ++r)
      for (int64_t i = 0; i < size; ++i) out[size_t(r * size + i)] = qkv[size_t(r * width + offset + i)];
    return splitHeads(ctx, out, B, S, N, size / N, bias.empty() ? nullptr : &bias, offset);
  };
  const Heads q = block(0, sizes[0]);
  Heads k = block(sizes[0], sizes[1]);
  Heads v = block(sizes[0] + sizes[1], sizes[2]);
  int64_t pastLength = 0;
  if (const Tensor* past = ctx.input(4); past && past->numel() > 0) {
    const auto& d = past->dims();
    if (d.size() != 5 || d[0] != 2 || d[1] != B || d[2] != N || d[4] != k.size || k.size != v.size)
      ctx.fail("past must be [2, batch, heads, past, head size]");
    if (!isFloating(past->dtype())) ctx.fail("past must be of a floating type");
    pastLength = d[3];
    k = concatPast(*past, 0, pastLength, k);
    v = concatPast(*past, past->numel() / 2, pastLength, v);
  }
  const int64_t T = k.length;
  const ScoreBias bias2 = maskBias(ctx, ctx.input(3), B, S, T, ctx.node().attrInt("unidirectional", 0) != 0,
                                   pastLength, attentionBias(ctx, ctx.input(5), B, N, S, T));
  const std::vector<double> y = attend(q, k, v, scaleFor(ctx, q.size), bias2);
  std::vector<Tensor> out{typed(x.dtype(), {B, S, sizes[2]}, {&y})};
  if (ctx.node().numOutputs() > 1) out.push_back(presentOf(x.dtype(), k, &v));
  return out;
}

// Key or value of MultiHeadAttention: [B, L, N·H] (projected, bias added) or already split [B, N, L, H].
Heads keyOrValue(const KernelContext& ctx, const Tensor& t, int64_t B, int64_t N, const std::vector<double>* bias,
                 int64_t biasOffset) {
  const auto& d = t.dims();
  if (d.size() == 3 && d[0] == B && d[2] % N == 0)
    return splitHeads(ctx, t.toDouble(), B, d[1], N, d[2] / N, bias, biasOffset);
  if (d.size() == 4 && d[0] == B && d[1] == N) return Heads{B, N, d[2], d[3], t.toDouble()};
  ctx.fail("key/value must be [batch, length, hidden] or [batch, heads, length, head size]");
}

std::vector<Tensor> multiHeadAttention(const KernelContext& ctx) {
  const Tensor& query = ctx.required(0);
  if (!isFloating(query.dtype())) return {};
  if (query.dims().size() != 3 || !ctx.input(1) || !ctx.input(2))
    ctx.fail("packed QKV / KV forms are not emulated: query must be [batch, sequence, hidden] with key and value");
  const int64_t B = query.dims()[0], S = query.dims()[1], D = query.dims()[2];
  const int64_t N = numHeads(ctx, D);
  std::vector<double> bias;
  const Tensor& key = ctx.required(1);
  const Tensor& value = ctx.required(2);
  const int64_t kWidth = key.dims().size() == 3 ? key.dims()[2] : D;
  if (const Tensor* b = ctx.input(3)) bias = b->toDouble();
  const std::vector<double>* bp = bias.empty() ? nullptr : &bias;
  if (bp && value.dims().size() == 3 && int64_t(bias.size()) != D + kWidth + value.dims()[2])
    ctx.fail("bias must hold the query, key and value biases");
  const Heads q = splitHeads(ctx, query.toDouble(), B, S, N, D / N, bp, 0);
  Heads k = keyOrValue(ctx, key, B, N, bp, D);
  Heads v = keyOrValue(ctx, value, B, N, bp, D + kWidth);
  if (k.size != q.size || v.length != k.length) ctx.fail("query, key and value disagree on their sizes");
  int64_t pastLength = 0;
  const Tensor* pastKey = ctx.input(6);
  const Tensor* pastValue = ctx.input(7);
  if (pastKey && pastValue && key.dims().size() == 3) {
    const auto& d = pastKey->dims();
    if (d.size() != 4 || d[0] != B || d[1] != N || d[3] != k.size || pastValue->dims().size() != 4 ||
        pastValue->dims()[2] != d[2] || pastValue->dims()[3] != v.size)
      ctx.fail("past_key / past_value must be [batch, heads, past, head size]");
    if (!isFloating(pastKey->dtype()) || !isFloating(pastValue->dtype()))
      ctx.fail("past_key / past_value must be of a floating type");
    pastLength = d[2];
    k = concatPast(*pastKey, 0, pastLength, k);
    v = concatPast(*pastValue, 0, pastLength, v);
  }
  const int64_t T = k.length;
  const ScoreBias bias2 = maskBias(ctx, ctx.input(4), B, S, T, ctx.node().attrInt("unidirectional", 0) != 0,
                                   pastLength, attentionBias(ctx, ctx.input(5), B, N, S, T));
  const std::vector<double> y = attend(q, k, v, scaleFor(ctx, q.size), bias2);
  std::vector<Tensor> out{typed(query.dtype(), {B, S, N * v.size}, {&y})};
  if (ctx.node().numOutputs() > 1) out.push_back(presentOf(query.dtype(), k));
  if (ctx.node().numOutputs() > 2) out.push_back(presentOf(query.dtype(), v));
  return out;
}

// Rotates pairs of each head's first `rotary` dims by the angle of the token's position: halves (x_i, x_{i+R/2}) or,
// interleaved, neighbours (x_2i, x_2i+1). Input [B, S, N·H] or [B, N, S, H]; position_ids [B, S] or one offset.
std::vector<Tensor> rotaryEmbedding(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  const Tensor& positions = ctx.required(1);
  const Tensor& cosCache = ctx.required(2);
  const Tensor& sinCache = ctx.required(3);
  if (!isFloating(x.dtype())) return {};
  if (cosCache.dims().size() != 2 || cosCache.dims() != sinCache.dims())
    ctx.fail("cos_cache and sin_cache must both be [max position, rotary dim / 2]");
  const bool split = x.dims().size() == 4;  // [B, N, S, H]
  if (x.dims().size() != 3 && !split) ctx.fail("input must be [batch, sequence, hidden] or [batch, heads, sequence, head]");
  const int64_t B = x.dims()[0], S = split ? x.dims()[2] : x.dims()[1];
  const int64_t half = cosCache.dims()[1];
  int64_t rotary = ctx.node().attrInt("rotary_embedding_dim", 0);
  int64_t N = split ? x.dims()[1] : ctx.node().attrInt("num_heads", 0);
  int64_t H = split ? x.dims()[3] : 0;
  if (!split) {
    if (N <= 0) N = x.dims()[2] / (rotary > 0 ? rotary : 2 * half);  // head size from the cache
    if (N <= 0 || x.dims()[2] % N) ctx.fail("the hidden size does not split into heads");
    H = x.dims()[2] / N;
  }
  if (rotary <= 0) rotary = H;
  if (rotary % 2 || rotary > H || rotary / 2 != half) ctx.fail("rotary_embedding_dim does not match the caches");
  const bool interleaved = ctx.node().attrInt("interleaved", 0) != 0;
  const std::vector<int64_t> pos = positions.toInt64();
  if (int64_t(pos.size()) != B * S && pos.size() != 1) ctx.fail("position_ids must be [batch, sequence] or one offset");
  const std::vector<double> c = cosCache.toDouble(), s = sinCache.toDouble();
  std::vector<double> v = x.toDouble();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < S; ++t) {
      const int64_t p = pos.size() == 1 ? pos[0] + t : pos[size_t(b * S + t)];
      if (p < 0 || p >= cosCache.dims()[0]) ctx.fail("position " + std::to_string(p) + " is outside the caches");
      for (int64_t n = 0; n < N; ++n) {
        double* e = v.data() + (split ? ((b * N + n) * S + t) * H : (b * S + t) * N * H + n * H);
        for (int64_t i = 0; i < half; ++i) {
          const double cv = c[size_t(p * half + i)], sv = s[size_t(p * half + i)];
          const int64_t i1 = interleaved ? 2 * i : i, i2 = interleaved ? 2 * i + 1 : i + half;
          const double a = e[i1], bb = e[i2];
          e[i1] = a * cv - bb * sv;
          e[i2] = bb * cv + a * sv;
        }
      }
    }
  return {typed(x.dtype(), x.dims(), {&v})};
}

}  // namespace

void registerContribAttentionKernels(KernelRegistry& r) {
  r.add("Attention", attention, "com.microsoft");
  r.add("MultiHeadAttention", multiHeadAttention, "com.microsoft");
  r.add("RotaryEmbedding", rotaryEmbedding, "com.microsoft");
}

}  // namespace kiln::kernels
