// BERT-base encoder (Hugging Face BertModel, last_hidden_state only) as torch.onnx.export writes it at opset 17:
// attention from MatMul/Reshape/Transpose/Softmax, LayerNorm and GELU written out as primitives.
#include <cmath>

#include "samples/graph_builder.h"

namespace kiln::samples {
namespace {

constexpr int64_t kHidden = 768, kHeads = 12, kHeadDim = 64, kFfn = 3072;
constexpr int64_t kVocab = 30522, kMaxPositions = 512, kTokenTypes = 2;
// Embeddings are initialised with std 0.02 (BERT's initializer_range): uniform of that std.
const Init kEmbeddingInit = Init::around(0.0f, 0.02f * std::sqrt(3.0f));

// nn.LayerNorm as exporters below opset 17 decompose it; kept here so the fusion passes have the pattern to find.
Value* layerNorm(GraphBuilder& b, Value* x, const std::string& name) {
  auto s = b.scope(name);
  Value* mean = b.reduceMean(x, {-1});
  Value* centred = b.sub(x, mean);
  Value* var = b.reduceMean(b.op("Pow", {centred, b.scalar(2.0f)}), {-1});
  Value* stddev = b.op("Sqrt", {b.add(var, b.scalar(1e-12f))});
  Value* gamma = b.weight("weight", {kHidden}, Init::around(1.0f, 0.05f));
  Value* beta = b.weight("bias", {kHidden}, Init::around(0.0f, 0.02f));
  return b.add(b.mul(b.div(centred, stddev), gamma), beta);
}

// Exact (erf) GELU: x · (1 + erf(x / √2)) · 0.5.
Value* gelu(GraphBuilder& b, Value* x) {
  auto s = b.scope("intermediate_act_fn");
  Value* e = b.op("Erf", {b.div(x, b.scalar(1.4142135f))});
  Value* y = b.mul(x, b.add(e, b.scalar(1.0f)));
  return b.mul(y, b.scalar(0.5f));
}

// [batch, seq, 768] -> per-head attention -> [batch, seq, 768]. Reshape targets use 0 ("keep this dim") so the
// symbolic batch and sequence dims pass through shape inference untouched.
Value* selfAttention(GraphBuilder& b, Value* x, Value* mask) {
  auto s = b.scope("self");
  Value* q = b.linear(x, "query", kHidden, kHidden);
  Value* k = b.linear(x, "key", kHidden, kHidden);
  Value* v = b.linear(x, "value", kHidden, kHidden);
  q = b.transpose(b.reshape(q, {0, 0, kHeads, kHeadDim}), {0, 2, 1, 3});  // [b, h, s, d]
  k = b.transpose(b.reshape(k, {0, 0, kHeads, kHeadDim}), {0, 2, 3, 1});  // Kᵀ directly: [b, h, d, s]
  v = b.transpose(b.reshape(v, {0, 0, kHeads, kHeadDim}), {0, 2, 1, 3});
  Value* scores = b.matMul(q, k);
  scores = b.div(scores, b.scalar(std::sqrt(static_cast<float>(kHeadDim))));
  Value* probs = b.softmax(b.add(scores, mask), -1);
  Value* context = b.transpose(b.matMul(probs, v), {0, 2, 1, 3});
  return b.reshape(context, {0, 0, kHidden});
}

Value* encoderLayer(GraphBuilder& b, Value* x, Value* mask) {
  Value* attended = nullptr;
  {
    auto s = b.scope("attention");
    Value* context = selfAttention(b, x, mask);
    auto o = b.scope("output");
    attended = layerNorm(b, b.add(b.linear(context, "dense", kHidden, kHidden), x), "LayerNorm");
  }
  Value* hidden = nullptr;
  {
    auto s = b.scope("intermediate");
    hidden = gelu(b, b.linear(attended, "dense", kHidden, kFfn));
  }
  auto s = b.scope("output");
  return layerNorm(b, b.add(b.linear(hidden, "dense", kFfn, kHidden), attended), "LayerNorm");
}

Value* embeddings(GraphBuilder& b, Value* ids) {
  auto s = b.scope("embeddings");
  Value* words = nullptr;
  {
    auto e = b.scope("word_embeddings");
    words = b.gather(b.weight("weight", {kVocab, kHidden}, kEmbeddingInit), ids);
  }
  // Token type ids are all zero (a single segment): one row of the table, broadcast over every token.
  Value* tokenType = nullptr;
  {
    auto e = b.scope("token_type_embeddings");
    Value* table = b.weight("weight", {kTokenTypes, kHidden}, kEmbeddingInit);
    tokenType = b.gather(table, b.scalarInt(0));
  }
  Value* x = b.add(words, tokenType);
  // Position ids 0..seq-1 as a running count of tokens (cumsum of ones shaped like input_ids) rather than
  // Range(Shape(...)): elementwise ops keep [batch, sequence] symbolic, so every later shape stays inferable.
  Value* ones = b.cast(b.op("GreaterOrEqual", {ids, b.scalarInt(0)}), DType::Int64);
  Value* count = b.op("CumSum", {ones, b.scalarInt(1)});
  Value* positions = b.sub(count, b.scalarInt(1));
  Value* positional = nullptr;
  {
    auto e = b.scope("position_embeddings");
    positional = b.gather(b.weight("weight", {kMaxPositions, kHidden}, kEmbeddingInit), positions);
  }
  return layerNorm(b, b.add(x, positional), "LayerNorm");
}

}  // namespace

void buildBertBase(GraphBuilder& b, int layers) {
  const std::vector<Dim> tokens{Dim::symbolic("batch"), Dim::symbolic("sequence")};
  Value* ids = b.input("input_ids", DType::Int64, tokens);
  Value* attentionMask = b.input("attention_mask", DType::Int64, tokens);
  // get_extended_attention_mask: [b, s] of 1/0 -> [b, 1, 1, s] of 0/-10000, added to every head's scores.
  Value* mask = b.cast(b.unsqueeze(attentionMask, {1, 2}), DType::Float);
  mask = b.sub(b.scalar(1.0f), mask);
  mask = b.mul(mask, b.scalar(-10000.0f));

  Value* x = embeddings(b, ids);
  auto encoder = b.scope("encoder");
  for (int i = 0; i < layers; ++i) {
    auto layer = b.scope("layer." + std::to_string(i));  // a ModuleList: indexed, never called itself
    x = encoderLayer(b, x, mask);
  }
  b.output(x, "last_hidden_state");
}

}  // namespace kiln::samples
