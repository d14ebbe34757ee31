// MatMulAddGeluFusion: the feed-forward block of BERT/GPT, MatMul + bias + GELU, becomes one kiln:FusedMatMul whose
// GELU runs on the Cube's output on the way out (activation "Gelu" or "GeluTanh"), instead of a bias pass and eight
// element-wise passes over the [tokens, 4·hidden] activation in HBM. The GELU may be written out (gelu_match.h), an
// ONNX Gelu (opset 20, approximate none/tanh), com.microsoft:Gelu, or com.microsoft:FastGelu / BiasGelu (which add
// their own bias input). The bias is a constant along the last axis, added by an Add or already held by a
// FusedMatMul from MatMulBiasAddFusion.
#include <algorithm>

#include "fusion/rules/builtin_rules.h"
#include "fusion/rules/gelu_match.h"
#include "fusion/rules/matmul_match.h"
#include "ir/graph.h"

namespace kiln {
namespace {

using namespace pattern;

// The GELU ending at `anchor`: written out, or one of the GELU ops (with its own bias input when it has one).
std::optional<GeluMatch> matchGelu(Node& anchor, Value*& ownBias) {
  const std::string t = anchor.qualifiedType();
  if (t == "Mul") return matchWrittenOutGelu(anchor);
  if (anchor.numInputs() < 1 || !anchor.input(0)) return std::nullopt;
  GeluMatch g{anchor.input(0), {&anchor}, false};
  if (t == "Gelu") {
    const std::string approx = anchor.attrString("approximate", "none");
    if (approx != "none" && approx != "tanh") return std::nullopt;
    g.tanh = approx == "tanh";
  } else if (t == "com.microsoft:FastGelu" || t == "com.microsoft:BiasGelu") {
    g.tanh = t == "com.microsoft:FastGelu";
    ownBias = anchor.input(1);
    if (t == "com.microsoft:BiasGelu" && !ownBias) return std::nullopt;
  } else if (t != "com.microsoft:Gelu") {
    return std::nullopt;
  }
  return g;
}

class MatMulAddGeluFusion final : public FusionRule {
 public:
  std::string name() const override { return "MatMulAddGeluFusion"; }
  std::vector<std::string> anchorTypes() const override {
    return {"Mul", "Gelu", "com.microsoft:Gelu", "com.microsoft:FastGelu", "com.microsoft:BiasGelu"};
  }

  Node* apply(Node& anchor, PassContext&) override {
    Value* ownBias = nullptr;
    const auto gelu = matchGelu(anchor, ownBias);
    if (!gelu) return nullptr;
    Value* x = gelu->x;
    // x becomes internal: every reader must be part of the GELU.
    if (x->isGraphOutput()) return nullptr;
    for (const Use& u : x->uses())
      if (std::find(gelu->nodes.begin(), gelu->nodes.end(), u.node) == gelu->nodes.end()) return nullptr;
    Node* producer = x->producer();
    if (!producer || producer->graph() != anchor.graph()) return nullptr;

    std::vector<Node*> group = gelu->nodes;
    Node* matmul = nullptr;
    Value* bias = nullptr;
    static const Op plain = plainMatMul();
    static const Op withAdd = matMulPlusConstant();
    if (ownBias) {  // FastGelu / BiasGelu(MatMul(A, B), bias)
      if (!match(plain, *producer) || !isLastAxisBias(*ownBias, *x)) return nullptr;
      matmul = producer;
      bias = ownBias;
    } else if (const auto m = match(withAdd, *producer)) {  // GELU(Add(MatMul(A, B), bias))
      if (!isLastAxisBias(*m->value("bias"), *m->value("product")) ||
          !(x->type().shape == m->value("product")->type().shape))
        return nullptr;
      matmul = m->node("matmul");
      bias = m->value("bias");
      group.insert(group.end(), m->nodes().begin(), m->nodes().end());
      producer = nullptr;  // already in the group
    } else if (producer->hasQualifiedType("kiln:FusedMatMul") && producer->numInputs() == 3 &&
               producer->attrString("activation", "").empty()) {  // MatMulBiasAddFusion got there first
      matmul = producer;
      bias = producer->input(2);
    } else {
      return nullptr;
    }
    if (producer) group.push_back(producer);
    if (!isFloating(x->type().dtype)) return nullptr;
    const std::string activation = gelu->tanh ? "GeluTanh" : "Gelu";
    return fuseNodes(group, fusedMatMulSpec(*matmul, bias, activation, anchor.output(0)), name());
  }
};

}  // namespace

std::shared_ptr<FusionRule> makeMatMulAddGeluFusion() { return std::make_shared<MatMulAddGeluFusion>(); }

}  // namespace kiln
