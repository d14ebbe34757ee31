// A LLaMA decoder (Hugging Face LlamaForCausalLM, 7B-shaped with grouped-query attention) as torch.onnx.export
// writes it at opset 17: RMSNorm, rotary embeddings, repeat_kv, the causal mask and SwiGLU all written out.
#include <cmath>
#include <cstdint>
#include <limits>

#include "samples/graph_builder.h"

namespace kiln::samples {
namespace {

constexpr int64_t kHidden = 4096, kHeads = 32, kKvHeads = 8, kHeadDim = 128, kFfn = 11008, kVocab = 32000;
constexpr int64_t kMaxPositions = 2048;  // rows of the cos/sin tables (LLaMA-1's context length)
constexpr float kEps = 1e-6f;

// RMSNorm: x / sqrt(mean(x²) + eps) · weight, with rsqrt exported as Sqrt + Reciprocal.
Value* rmsNorm(GraphBuilder& b, Value* x, const std::string& name) {
  auto s = b.scope(name);
  Value* meanSquare = b.reduceMean(b.op("Pow", {x, b.scalar(2.0f)}), {-1});
  Value* inverse = b.op("Reciprocal", {b.op("Sqrt", {b.add(meanSquare, b.scalar(kEps))})});
  Value* y = b.mul(x, inverse);
  return b.mul(b.weight("weight", {kHidden}, Init::around(1.0f, 0.05f)), y);
}

// x·cos + rotate_half(x)·sin, where rotate_half swaps the two halves of the head dim and negates the new first.
// x is [b, s, heads, d] and cos/sin [b, s, 1, d] (apply_rotary_pos_emb with unsqueeze_dim=2).
Value* rotary(GraphBuilder& b, Value* x, Value* cos, Value* sin) {
  Value* first = b.slice(x, {0}, {kHeadDim / 2}, {-1});
  Value* second = b.slice(x, {kHeadDim / 2}, {std::numeric_limits<int64_t>::max()}, {-1});
  Value* rotated = b.concat({b.op("Neg", {second}), first}, -1);
  Value* straight = b.mul(x, cos);
  return b.add(straight, b.mul(rotated, sin));
}

// repeat_kv: each of the 8 KV heads serves 4 query heads. Done on [b, s, kv, d] (before the head transpose) so
// the final Reshape only needs "keep" (0) dims and constants, and symbolic dims survive shape inference.
Value* repeatKv(GraphBuilder& b, Value* x) {
  Value* expanded = b.op("Expand", {b.unsqueeze(x, {3}), b.ints({1, 1, 1, kHeads / kKvHeads, 1})});
  return b.reshape(expanded, {0, 0, kHeads, kHeadDim});
}

Value* attention(GraphBuilder& b, Value* x, Value* cos, Value* sin, Value* mask) {
  auto s = b.scope("self_attn");
  Value* q = b.linear(x, "q_proj", kHidden, kHeads * kHeadDim, false);
  Value* k = b.linear(x, "k_proj", kHidden, kKvHeads * kHeadDim, false);
  Value* v = b.linear(x, "v_proj", kHidden, kKvHeads * kHeadDim, false);
  q = b.reshape(q, {0, 0, kHeads, kHeadDim});
  k = b.reshape(k, {0, 0, kKvHeads, kHeadDim});
  v = b.reshape(v, {0, 0, kKvHeads, kHeadDim});
  Value* headCos = b.unsqueeze(cos, {2});
  Value* headSin = b.unsqueeze(sin, {2});
  q = rotary(b, q, headCos, headSin);
  k = repeatKv(b, rotary(b, k, headCos, headSin));
  v = repeatKv(b, v);
  q = b.transpose(q, {0, 2, 1, 3});  // [b, h, s, d]
  k = b.transpose(k, {0, 2, 3, 1});  // Kᵀ: [b, h, d, s]
  v = b.transpose(v, {0, 2, 1, 3});
  Value* scores = b.matMul(q, k);
  scores = b.div(scores, b.scalar(std::sqrt(static_cast<float>(kHeadDim))));
  Value* probs = b.softmax(b.add(scores, mask), -1);
  Value* context = b.transpose(b.matMul(probs, v), {0, 2, 1, 3});
  return b.linear(b.reshape(context, {0, 0, kHidden}), "o_proj", kHidden, kHidden, false);
}

// SwiGLU: down(silu(gate(x)) · up(x)), SiLU written as x · sigmoid(x).
Value* mlp(GraphBuilder& b, Value* x) {
  auto s = b.scope("mlp");
  Value* gate = b.linear(x, "gate_proj", kHidden, kFfn, false);
  {
    auto act = b.scope("act_fn");
    gate = b.mul(gate, b.op("Sigmoid", {gate}));
  }
  Value* up = b.linear(x, "up_proj", kHidden, kFfn, false);
  return b.linear(b.mul(gate, up), "down_proj", kFfn, kHidden, false);
}

Value* decoderLayer(GraphBuilder& b, Value* x, Value* cos, Value* sin, Value* mask) {
  x = b.add(x, attention(b, rmsNorm(b, x, "input_layernorm"), cos, sin, mask));
  return b.add(x, mlp(b, rmsNorm(b, x, "post_attention_layernorm")));
}

// cos or sin of position · θ_i, θ_i = 10000^(-2i/d), with the d/2 frequencies repeated for both halves.
GraphBuilder::Fill rotaryTable(bool sine) {
  return [sine](size_t offset, std::span<float> out) {
    constexpr auto d = static_cast<size_t>(kHeadDim);
    for (size_t i = 0; i < out.size(); ++i) {
      const size_t flat = offset + i;
      const auto position = static_cast<double>(flat / d);
      const auto freq = static_cast<double>(flat % d % (d / 2));
      const double angle = position * std::pow(10000.0, -2.0 * freq / static_cast<double>(d));
      out[i] = static_cast<float>(sine ? std::sin(angle) : std::cos(angle));
    }
  };
}

}  // namespace

void buildLlama(GraphBuilder& b, int layers) {
  Value* ids = b.input("input_ids", DType::Int64, {Dim::symbolic("batch"), Dim::symbolic("sequence")});
  Value* x = nullptr;
  {
    auto model = b.scope("model");
    {
      auto e = b.scope("embed_tokens");
      x = b.gather(b.weight("weight", {kVocab, kHidden}, Init::around(0.0f, 0.02f * std::sqrt(3.0f))), ids);
    }
    // Position ids 0..seq-1 as a running count of tokens: elementwise ops keep [batch, sequence] symbolic, where
    // Range(Shape(...)) would leave the sequence length unknown to shape inference.
    Value* ones = b.cast(b.op("GreaterOrEqual", {ids, b.scalarInt(0)}), DType::Int64);
    Value* count = b.op("CumSum", {ones, b.scalarInt(1)});
    Value* positions = b.sub(count, b.scalarInt(1));
    Value* cos = nullptr;
    Value* sin = nullptr;
    {
      auto r = b.scope("rotary_emb");
      Value* cosTable = b.buffer("cos_cached", {kMaxPositions, kHeadDim}, rotaryTable(false));
      Value* sinTable = b.buffer("sin_cached", {kMaxPositions, kHeadDim}, rotaryTable(true));
      cos = b.gather(cosTable, positions);  // [b, s, d]
      sin = b.gather(sinTable, positions);
    }
    // Causal mask from the same positions: key j is hidden from query i when j > i. [b, 1, s, s] of 0 / lowest.
    Value* future = b.op("Greater", {b.unsqueeze(positions, {1}), b.unsqueeze(positions, {2})});
    Value* bias = b.op("Where", {future, b.scalar(std::numeric_limits<float>::lowest()), b.scalar(0.0f)});
    Value* mask = b.unsqueeze(bias, {1});

    for (int i = 0; i < layers; ++i) {
      auto layer = b.scope("layers." + std::to_string(i));  // a ModuleList: indexed, never called itself
      x = decoderLayer(b, x, cos, sin, mask);
    }
    x = rmsNorm(b, x, "norm");
  }
  b.output(b.linear(x, "lm_head", kHidden, kVocab, false), "logits");
}

}  // namespace kiln::samples
