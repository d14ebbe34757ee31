// AttentionFusion: scaled dot-product attention as BERT-style exports write it becomes one kiln:Attention, so the
// [B,H,S,S] scores and probabilities never travel to HBM and back (the Cube unit keeps them on chip).
//   q = Transpose(Reshape(Q, [B,S,H,D]), 0,2,1,3)            [· or / scalar]
//   kᵀ = Transpose(Reshape(K), 0,2,3,1) | Transpose(Transpose(Reshape(K), 0,2,1,3), 0,1,3,2)   [· or / scalar]
//   v = Transpose(Reshape(V), 0,2,1,3)
//   s = MatMul(q, kᵀ) [· or / scalar]
//   p = Softmax(s [+ mask] | Where(cond, fill, s), last axis)
//   Y = Reshape(Transpose(MatMul(p, v), 0,2,1,3), [B,S,H*Dv])      ->  Y = kiln:Attention(Q, K, V [, mask | cond])
// The scalings multiply into the attribute `scale`; a Where mask (masked_fill) passes its bool cond as the Mask
// and its fill as `mask_filter_value`. A mask computed outside ((1 - m) · -10000) stays outside: its result is
// the additive Mask input.
// Every head split is proven from the inferred shapes (B and S kept, H*D = the hidden width); every intermediate
// must be read only inside the pattern. A past key/value Concat, a Where/Slice causal mask or a head split that is
// not provable leaves the graph as it is. Anchored at the final Reshape.
#include <optional>

#include "fusion/erase_dead_inputs.h"
#include "ir/fused_node.h"
#include "fusion/match_helpers.h"
#include "fusion/rules/builtin_rules.h"
#include "fusion/rules/softmax_match.h"
#include "ir/graph.h"
#include "ir/model.h"
#include "ir/opdefs/op_registry.h"
#include "passes/pass.h"

namespace kiln {
namespace {

struct Match {
  std::vector<Node*> nodes;
  std::vector<Value*> sideInputs;  // shape and scale constants the group reads, erased when left unused
  double scale = 1.0;
};

// The producer of `v` when it is a default-domain `op` whose output is read only by the pattern.
Node* innerProducer(Value* v, const char* op, Match& m) {
  Node* p = producerOfType(v, op);
  if (!p || !hasSingleUse(v)) return nullptr;
  m.nodes.push_back(p);
  return p;
}

// Peels Mul(v, c) / Mul(c, v) / Div(v, c) by a scalar constant off `v`, folding c (or 1/c) into the scale.
Value* skipScale(Value* v, Match& m) {
  for (;;) {
    Node* p = v && v->producer() && hasSingleUse(v) ? v->producer() : nullptr;
    if (!p || !p->domain().empty() || p->numInputs() != 2) return v;
    const bool mul = p->opType() == "Mul", div = p->opType() == "Div";
    if (!mul && !div) return v;
    size_t side = 1;
    auto c = floatScalarConstant(p->input(1));
    if (!c && mul) {
      side = 0;
      c = floatScalarConstant(p->input(0));
    }
    if (!c || (div && *c == 0.0)) return v;
    m.scale *= div ? 1.0 / *c : *c;
    m.nodes.push_back(p);
    m.sideInputs.push_back(p->input(side));
    v = p->input(1 - side);
  }
}

bool hasPerm(const Node* t, std::vector<int64_t> perm) { return t && t->attrInts("perm") == perm; }

struct Heads {
  Value* projection = nullptr;  // [B,S,H*D], the fused node's input
  int64_t heads = 0, headDim = 0;
};

// Reshape(x [B,S,H*D]) -> [B,S,H,D], proven from the inferred shapes.
std::optional<Heads> headSplit(Value* v, Match& m) {
  Node* r = innerProducer(v, "Reshape", m);
  if (!r || !r->input(0)) return std::nullopt;
  const Shape& in = r->input(0)->type().shape;
  const Shape& out = v->type().shape;
  if (!in.rankKnown() || !out.rankKnown() || in.rank() != 3 || out.rank() != 4) return std::nullopt;
  if (!provablySameDim(in[0], out[0]) || !provablySameDim(in[1], out[1])) return std::nullopt;
  if (!in[2].isStatic() || !out[2].isStatic() || !out[3].isStatic() || out[2].value <= 0 ||
      out[2].value * out[3].value != in[2].value)
    return std::nullopt;
  m.sideInputs.push_back(r->input(1));
  return Heads{r->input(0), out[2].value, out[3].value};
}

// [B,H,S,D] from its projection: Transpose(Reshape(x), 0,2,1,3).
std::optional<Heads> headsOf(Value* v, Match& m) {
  Node* t = innerProducer(v, "Transpose", m);
  return hasPerm(t, {0, 2, 1, 3}) ? headSplit(t->input(0), m) : std::nullopt;
}

// Kᵀ [B,H,D,S]: one Transpose 0,2,3,1 of the split, or the heads transposed again on their last two axes.
std::optional<Heads> transposedKeyOf(Value* v, Match& m) {
  Node* t = innerProducer(v, "Transpose", m);
  if (hasPerm(t, {0, 2, 3, 1})) return headSplit(t->input(0), m);
  if (hasPerm(t, {0, 1, 3, 2})) return headsOf(skipScale(t->input(0), m), m);
  return std::nullopt;
}

bool isFloatTensor(const Value* v) { return v && v->type().isTensor() && isFloating(v->type().dtype); }

class AttentionFusion final : public FusionRule {
 public:
  std::string name() const override { return "AttentionFusion"; }
  std::vector<std::string> anchorTypes() const override { return {"Reshape"}; }

  Node* apply(Node& merge, PassContext& ctx) override {
    if (!merge.output(0)) return nullptr;
    Match m;
    m.nodes.push_back(&merge);
    m.sideInputs.push_back(merge.input(1));
    Node* back = innerProducer(merge.input(0), "Transpose", m);
    if (!hasPerm(back, {0, 2, 1, 3})) return nullptr;
    Node* pv = innerProducer(back->input(0), "MatMul", m);
    if (!pv) return nullptr;
    Node* softmax = innerProducer(pv->input(0), "Softmax", m);
    if (!softmax || !softmaxOverLastAxis(*softmax, ctx.model.opsetFor(""))) return nullptr;
    const auto v = headsOf(pv->input(1), m);
    if (!v) return nullptr;

    // Scores: [mask] over [scale] over MatMul(q, kᵀ). The mask is an Add of any tensor (either side), or the
    // masked_fill form Where(cond, fill, scores) with a bool cond and a scalar constant fill.
    Value* scores = softmax->input(0);
    Node* masking = scores->producer();
    std::vector<std::pair<size_t, size_t>> sides{{0, 0}};  // (scores input, mask input) of `masking`
    std::optional<double> fill;
    if (!masking || !masking->domain().empty() || !hasSingleUse(scores)) {
      masking = nullptr;
    } else if (masking->opType() == "Add" && masking->numInputs() == 2) {
      sides = {{0, 1}, {1, 0}};
    } else if (masking->opType() == "Where" && masking->numInputs() == 3 && masking->input(0) &&
               masking->input(0)->type().dtype == DType::Bool && (fill = floatScalarConstant(masking->input(1)))) {
      sides = {{2, 0}};
    } else {
      masking = nullptr;
    }
    const size_t nodesMark = m.nodes.size(), sideMark = m.sideInputs.size();
    std::optional<Heads> q, k;
    Value* mask = nullptr;
    for (auto [scoreSide, maskSide] : sides) {
      if (q) break;
      m.nodes.resize(nodesMark);
      m.sideInputs.resize(sideMark);
      m.scale = 1.0;
      Node* qk = innerProducer(skipScale(masking ? masking->input(scoreSide) : scores, m), "MatMul", m);
      if (!qk) continue;
      q = headsOf(skipScale(qk->input(0), m), m);
      k = q ? transposedKeyOf(skipScale(qk->input(1), m), m) : std::nullopt;
      if (!k) q.reset();
      mask = masking ? masking->input(maskSide) : nullptr;
      if (q && masking && !keepsScoresShape(*masking, masking->input(scoreSide))) q.reset();
    }
    if (!q || q->heads != k->heads || q->heads != v->heads || q->headDim != k->headDim) return nullptr;
    if (masking) m.nodes.push_back(masking);
    if (fill) m.sideInputs.push_back(masking->input(1));
    if (!isFloatTensor(q->projection) || q->projection->type().dtype != k->projection->type().dtype ||
        q->projection->type().dtype != v->projection->type().dtype)
      return nullptr;

    // The merge gives back [B,S,H*Dv] for Q's batch and sequence.
    const Shape& qs = q->projection->type().shape;
    const Shape& ys = merge.output(0)->type().shape;
    if (!ys.rankKnown() || ys.rank() != 3 || !provablySameDim(ys[0], qs[0]) || !provablySameDim(ys[1], qs[1]) ||
        !ys[2].isStatic() || ys[2].value != v->heads * v->headDim)
      return nullptr;

    FusedNodeSpec spec;
    spec.opType = "Attention";
    spec.domain = std::string(kKilnDomain);
    spec.inputs = {q->projection, k->projection, v->projection};
    if (mask) spec.inputs.push_back(mask);
    spec.outputs = {merge.output(0)};
    spec.attrs = {{"num_heads", Attribute(q->heads)}, {"scale", Attribute(static_cast<float>(m.scale))}};
    if (fill) spec.attrs.push_back({"mask_filter_value", Attribute(static_cast<float>(*fill))});
    Node* fused = fuseNodes(m.nodes, spec, name());
    eraseDeadInputs(m.sideInputs);
    return fused;
  }

 private:
  // The mask only broadcasts into the scores [B,H,Sq,Skv]: the masking op's result has the raw scores' shape.
  static bool keepsScoresShape(const Node& masking, const Value* raw) {
    const Shape& s = masking.output(0)->type().shape;
    const Shape& rs = raw->type().shape;
    if (!s.rankKnown() || s.rank() != 4 || !rs.rankKnown() || rs.rank() != 4) return false;
    for (const Value* in : masking.inputs())
      if (!in || !in->type().shape.rankKnown() || in->type().shape.rank() > 4) return false;
    for (size_t i = 0; i < 4; ++i)
      if (!provablySameDim(s[i], rs[i])) return false;
    return true;
  }
};

}  // namespace

std::shared_ptr<FusionRule> makeAttentionFusion() { return std::make_shared<AttentionFusion>(); }

}  // namespace kiln
