// The opset-23 transformer ops of ai.onnx, computed in double and rounded once into the output type:
//   Attention-23/24   Y = softmax(softcap(Q·Kᵀ·scale) + mask) · V per head. Q, K, V are [B, S, heads·D] (q_num_heads,
//                  kv_num_heads given) or [B, heads, S, D]; grouped-query attention when K/V have fewer heads (Q head
//                  h reads K/V head h / (qH / kvH)). past_key / past_value [B, kvH, P, D] are prepended and returned
//                  as present_key / present_value. attn_mask broadcasts to [B, qH, Sq, P + Skv]: bool (true = attend)
//                  or added. As the corrected ONNX text (1.19 errata) and ONNX Runtime 1.30: softcap comes before the
//                  mask; is_causal lets query i see key j <= i + P (aligned to the end of the cache); a row with
//                  every key masked gives 0; qk_matmul_output (output 3) is the scaled product at
//                  qk_matmul_output_mode 0, after softcap at 1, after softcap and mask at 2, the softmax at 3.
//                  Attention-24: nonpad_kv_seqlen [B] masks keys at or past it (the causal offset is then nonpad -
//                  Sq); a mask whose last axis is shorter than the keys masks the rest.
//   RotaryEmbedding-23   X [B, S, H·D] (num_heads given) or [B, H, S, D]; the first rotary_embedding_dim (default D)
//                  values of each head rotate by cos/sin_cache ([B, S, rd/2], or [max_pos, rd/2] indexed by
//                  position_ids [B, S]) as halves (x1·cos − x2·sin, x2·cos + x1·sin) or, interleaved, as pairs.
#include <cmath>
#include <limits>

#include "ir/graph.h"
#include "kernels/kernel_util.h"
#include "kernels/nn_kernels.h"

namespace kiln::kernels {
namespace {

// A [B, heads, S, D] view of a 3-D [B, S, heads·D] or 4-D [B, heads, S, D] tensor, read into double.
struct Heads {
  int64_t batch = 0, heads = 0, seq = 0, dim = 0;
  std::vector<double> v;  // [B, heads, S, D]
  double at(int64_t b, int64_t h, int64_t s, int64_t d) const {
    return v[static_cast<size_t>(((b * heads + h) * seq + s) * dim + d)];
  }
};

Heads readHeads(const KernelContext& ctx, const Tensor& t, int64_t headsAttr, const char* what) {
  Heads h;
  const auto& d = t.dims();
  const std::vector<double> raw = t.toDouble();
  if (d.size() == 4) {
    h = {d[0], d[1], d[2], d[3], raw};
    return h;
  }
  if (d.size() != 3) ctx.fail(std::string(what) + " must have rank 3 or 4");
  if (headsAttr <= 0 || d[2] % headsAttr != 0)
    ctx.fail(std::string(what) + " hidden size " + std::to_string(d[2]) + " is not a multiple of the head count");
  h.batch = d[0];
  h.seq = d[1];
  h.heads = headsAttr;
  h.dim = d[2] / headsAttr;
  h.v.resize(raw.size());
  for (int64_t b = 0; b < h.batch; ++b)
    for (int64_t s = 0; s < h.seq; ++s)
      for (int64_t hh = 0; hh < h.heads; ++hh)
        for (int64_t k = 0; k < h.dim; ++k)
          h.v[static_cast<size_t>(((b * h.heads + hh) * h.seq + s) * h.dim + k)] =
              raw[static_cast<size_t>(((b * h.seq + s) * h.heads + hh) * h.dim + k)];
  return h;
}

// Prepends past [B, heads, P, D] along the sequence.
Heads withPast(const KernelContext& ctx, const Heads& cur, const Tensor* past, const char* what) {
  if (!past) return cur;
  const auto& d = past->dims();
  if (d.size() != 4 || d[0] != cur.batch || d[1] != cur.heads || d[3] != cur.dim)
    ctx.fail(std::string(what) + " must be [B, kv_num_heads, P, head_size]");
  const std::vector<double> p = past->toDouble();
  Heads all{cur.batch, cur.heads, d[2] + cur.seq, cur.dim, {}};
  all.v.resize(static_cast<size_t>(all.batch * all.heads * all.seq * all.dim));
  for (int64_t b = 0; b < all.batch; ++b)
    for (int64_t h = 0; h < all.heads; ++h)
      for (int64_t s = 0; s < all.seq; ++s)
        for (int64_t k = 0; k < all.dim; ++k)
          all.v[static_cast<size_t>(((b * all.heads + h) * all.seq + s) * all.dim + k)] =
              s < d[2] ? p[static_cast<size_t>(((b * all.heads + h) * d[2] + s) * all.dim + k)]
                       : cur.at(b, h, s - d[2], k);
  return all;
}

// [B, heads, S, D] back to [B, S, heads·D] (readHeads' 3-D layout).
std::vector<double> mergeHeads(const std::vector<double>& y, int64_t batch, int64_t heads, int64_t seq, int64_t dim) {
  std::vector<double> merged(y.size());
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t s = 0; s < seq; ++s)
        for (int64_t d = 0; d < dim; ++d)
          merged[static_cast<size_t>(((b * seq + s) * heads + h) * dim + d)] =
              y[static_cast<size_t>(((b * heads + h) * seq + s) * dim + d)];
  return merged;
}

Tensor inTypeOf(const KernelContext& ctx, DType t, std::vector<int64_t> dims, const std::vector<double>& v) {
  Tensor out;
  dispatch<kFloats>(t, [&](auto tag) { out = nn::storeAll<typename decltype(tag)::type>(ctx, std::move(dims), v); });
  return out;
}

std::vector<Tensor> attention(const KernelContext& ctx) {
  const Tensor& qt = ctx.required(0);
  const Tensor& kt = ctx.required(1);
  const Tensor& vt = ctx.required(2);
  if (!isFloating(qt.dtype()) || !isFloating(kt.dtype()) || !isFloating(vt.dtype())) return {};
  const Node& node = ctx.node();
  const Heads q = readHeads(ctx, qt, node.attrInt("q_num_heads", 0), "Q");
  const Heads k = withPast(ctx, readHeads(ctx, kt, node.attrInt("kv_num_heads", 0), "K"), ctx.input(4), "past_key");
  const Heads v = withPast(ctx, readHeads(ctx, vt, node.attrInt("kv_num_heads", 0), "V"), ctx.input(5), "past_value");
  if (k.batch != q.batch || v.batch != q.batch || k.heads != v.heads || k.seq != v.seq || k.dim != q.dim)
    ctx.fail("Q, K and V disagree in batch, heads, sequence or head size");
  if (k.heads == 0 || q.heads % k.heads != 0) ctx.fail("q_num_heads is not a multiple of kv_num_heads");
  const int64_t group = q.heads / k.heads, total = k.seq;
  const int64_t past = total - (kt.dims().size() == 4 ? kt.dims()[2] : kt.dims()[1]);  // keys from past_key
  const double scale = hasAttr(node, "scale") ? node.attrFloat("scale", 1.0f) : 1.0 / std::sqrt(double(q.dim));
  const double softcap = node.attrFloat("softcap", 0.0f);
  const bool causal = node.attrInt("is_causal", 0) != 0;
  const int64_t mode = node.attrInt("qk_matmul_output_mode", 0);
  // The mask broadcast to [B, qH, Sq, total].
  const Tensor* maskT = ctx.input(3);
  std::vector<int64_t> maskStrides;
  std::vector<double> mask;
  const std::vector<int64_t> scoreDims{q.batch, q.heads, q.seq, total};
  int64_t maskKeys = total;  // Attention-24: a mask may cover fewer keys than there are; the rest are masked
  if (maskT) {
    if (maskT->dims().size() > 4 || maskT->dims().empty()) ctx.fail("attn_mask must have rank 1 to 4");
    std::vector<int64_t> target = scoreDims;
    if (maskT->dims().back() < total && maskT->dims().back() > 1) target.back() = maskKeys = maskT->dims().back();
    for (size_t i = 0; i < maskT->dims().size(); ++i) {
      const int64_t want = target[4 - maskT->dims().size() + i];
      if (maskT->dims()[i] != 1 && maskT->dims()[i] != want) ctx.fail("attn_mask does not broadcast to the scores");
    }
    maskStrides = broadcastStrides(target, maskT->dims());
    mask = maskT->toDouble();
  }
  // Attention-24's nonpad_kv_seqlen: per batch, the keys that hold data in an external cache (TensorScatter's).
  std::vector<int64_t> nonpad;
  if (const Tensor* np = ctx.input(6)) {
    nonpad = intValues(ctx, *np, "nonpad_kv_seqlen");
    if (static_cast<int64_t>(nonpad.size()) != q.batch) ctx.fail("nonpad_kv_seqlen must hold one length per batch");
  }
  const double negInf = -std::numeric_limits<double>::infinity();
  checkScratch(ctx, q.batch * q.heads * q.seq * total, 2 * sizeof(double));
  std::vector<double> y(static_cast<size_t>(q.batch * q.heads * q.seq * v.dim), 0.0);
  std::vector<double> qk(static_cast<size_t>(q.batch * q.heads * q.seq * total));
  std::vector<double> row(static_cast<size_t>(total));
  for (int64_t b = 0; b < q.batch; ++b)
    for (int64_t h = 0; h < q.heads; ++h) {
      const int64_t kh = h / group;
      const int64_t valid = nonpad.empty() ? total : std::clamp<int64_t>(nonpad[static_cast<size_t>(b)], 0, total);
      // Causal alignment: to the end of the past keys, or of the valid keys of an external cache.
      const int64_t offset = nonpad.empty() ? past : valid - q.seq;
      for (int64_t i = 0; i < q.seq; ++i) {
        double peak = negInf;
        for (int64_t j = 0; j < total; ++j) {
          double s = 0;
          for (int64_t d = 0; d < q.dim; ++d) s += q.at(b, h, i, d) * k.at(b, kh, j, d);
          s *= scale;
          double out = s;  // qk_matmul_output mode 0: the scaled product
          if (softcap > 0) s = softcap * std::tanh(s / softcap);
          if (mode == 1) out = s;
          if (maskT && j >= maskKeys) {
            s = negInf;
          } else if (maskT) {
            const int64_t at = b * maskStrides[0] + h * maskStrides[1] + i * maskStrides[2] + j * maskStrides[3];
            const double m = mask[static_cast<size_t>(at)];
            s = maskT->dtype() == DType::Bool ? (m != 0 ? s : negInf) : s + m;
          }
          if ((causal && j > i + offset) || j >= valid) s = negInf;
          if (mode == 2) out = s;
          row[static_cast<size_t>(j)] = s;
          qk[static_cast<size_t>(((b * q.heads + h) * q.seq + i) * total + j)] = out;
          peak = std::max(peak, s);
        }
        double sum = 0;
        for (double& e : row) {
          e = peak == negInf ? 0.0 : std::exp(e - peak);
          sum += e;
        }
        for (int64_t j = 0; j < total; ++j) {
          const double p = sum > 0 ? row[static_cast<size_t>(j)] / sum : 0.0;
          if (mode == 3) qk[static_cast<size_t>(((b * q.heads + h) * q.seq + i) * total + j)] = p;
          if (p == 0) continue;
          for (int64_t d = 0; d < v.dim; ++d)
            y[static_cast<size_t>(((b * q.heads + h) * q.seq + i) * v.dim + d)] += p * v.at(b, kh, j, d);
        }
      }
    }
  std::vector<Tensor> out;
  if (qt.dims().size() == 3) {  // back to [B, Sq, qH·Dv]
    out.push_back(inTypeOf(ctx, qt.dtype(), {q.batch, q.seq, q.heads * v.dim},
                           mergeHeads(y, q.batch, q.heads, q.seq, v.dim)));
  } else {
    out.push_back(inTypeOf(ctx, qt.dtype(), {q.batch, q.heads, q.seq, v.dim}, y));
  }
  if (node.numOutputs() > 1) out.push_back(inTypeOf(ctx, kt.dtype(), {k.batch, k.heads, total, k.dim}, k.v));
  if (node.numOutputs() > 2) out.push_back(inTypeOf(ctx, vt.dtype(), {v.batch, v.heads, total, v.dim}, v.v));
  if (node.numOutputs() > 3) out.push_back(inTypeOf(ctx, qt.dtype(), scoreDims, qk));
  return out;
}

std::vector<Tensor> rotaryEmbedding(const KernelContext& ctx) {
  const Tensor& xt = ctx.required(0);
  const Tensor& cosT = ctx.required(1);
  const Tensor& sinT = ctx.required(2);
  const Tensor* posT = ctx.input(3);
  if (!isFloating(xt.dtype())) return {};
  const Node& node = ctx.node();
  const bool fourD = xt.dims().size() == 4;
  const Heads x = readHeads(ctx, xt, node.attrInt("num_heads", 0), "X");
  const int64_t rd = node.attrInt("rotary_embedding_dim", 0) > 0 ? node.attrInt("rotary_embedding_dim", 0) : x.dim;
  if (rd > x.dim || rd % 2 != 0) ctx.fail("rotary_embedding_dim must be even and at most the head size");
  const int64_t half = rd / 2;
  const std::vector<double> cosv = cosT.toDouble(), sinv = sinT.toDouble();
  std::vector<int64_t> pos;
  if (posT) {
    pos = intValues(ctx, *posT, "position_ids");
    if (posT->dims() != std::vector<int64_t>{x.batch, x.seq}) ctx.fail("position_ids must be [B, S]");
    if (cosT.dims().size() != 2 || cosT.dims()[1] != half || sinT.dims() != cosT.dims())
      ctx.fail("cos_cache and sin_cache must be [max_position, rotary_embedding_dim / 2]");
  } else if (cosT.dims() != std::vector<int64_t>{x.batch, x.seq, half} || sinT.dims() != cosT.dims()) {
    ctx.fail("cos_cache and sin_cache must be [B, S, rotary_embedding_dim / 2] without position_ids");
  }
  std::vector<double> y = x.v;
  for (int64_t b = 0; b < x.batch; ++b)
    for (int64_t s = 0; s < x.seq; ++s) {
      int64_t row = b * x.seq + s;
      if (posT) {
        row = pos[static_cast<size_t>(b * x.seq + s)];
        if (row < 0 || row >= cosT.dims()[0]) ctx.fail("position id " + std::to_string(row) + " is outside the cache");
      }
      for (int64_t h = 0; h < x.heads; ++h) {
        const size_t base = static_cast<size_t>(((b * x.heads + h) * x.seq + s) * x.dim);
        for (int64_t i = 0; i < half; ++i) {
          const double c = cosv[static_cast<size_t>(row * half + i)], sn = sinv[static_cast<size_t>(row * half + i)];
          const size_t a = base + static_cast<size_t>(node.attrInt("interleaved", 0) ? 2 * i : i);
          const size_t bb = base + static_cast<size_t>(node.attrInt("interleaved", 0) ? 2 * i + 1 : i + half);
          y[a] = x.v[a] * c - x.v[bb] * sn;
          y[bb] = x.v[bb] * c + x.v[a] * sn;
        }
      }
    }
  if (fourD) return {inTypeOf(ctx, xt.dtype(), xt.dims(), y)};
  return {inTypeOf(ctx, xt.dtype(), xt.dims(), mergeHeads(y, x.batch, x.heads, x.seq, x.dim))};
}

}  // namespace

void registerOnnxAttentionKernels(KernelRegistry& r) {
  r.add("Attention", attention);
  r.add("RotaryEmbedding", rotaryEmbedding);
}

}  // namespace kiln::kernels
