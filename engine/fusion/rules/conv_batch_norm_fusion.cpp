// ConvBatchNormFusion: an inference BatchNormalization reading only a Conv's output is folded into that Conv's
// weights and bias (GE's Conv+BN graph fusion): the BN's whole pass over the activation in HBM disappears and the
// Cube produces normalised values directly. Needs constant weights, bias (if any) and BN parameters; the arithmetic
// is shared with Stage 1's BatchNormFold (passes/prepare/batchnorm_math.h). Switched off, the BN stays.
#include "ir/fused_node.h"
#include "fusion/pattern.h"
#include "fusion/rules/builtin_rules.h"
#include "ir/graph.h"
#include "passes/prepare/batchnorm_math.h"
#include "passes/prepare/fold_support.h"

namespace kiln {
namespace {

class ConvBatchNormFusion final : public FusionRule {
 public:
  std::string name() const override { return "ConvBatchNormFusion"; }
  std::vector<std::string> anchorTypes() const override { return {"BatchNormalization"}; }

  Node* apply(Node& bn, PassContext&) override {
    using namespace pattern;
    static const Op p = op("BatchNormalization", {from(op("Conv", {any("x"), any("w")}).bind("conv"))})
                            .where([](const Node& n) { return isInferenceBatchNorm(n); });
    const auto m = match(p, bn);
    if (!m) return nullptr;
    Node* conv = m->node("conv");
    Value* wValue = conv->input(1);
    Value* bValue = conv->numInputs() > 2 ? conv->input(2) : nullptr;
    const Tensor* w = constantData(wValue);
    const Tensor* b = bValue ? constantData(bValue) : nullptr;
    if (!w || !isFloating(w->dtype()) || (bValue && (!b || b->dtype() != w->dtype()))) return nullptr;
    const auto folded = foldBatchNormIntoConv(*w, b, bn);
    if (!folded || !folded->weights.valid() || !folded->bias.valid()) return nullptr;

    Graph& g = *bn.graph();
    // Named after the Conv's output, which is unique, so two BNs on a shared weight get distinct names.
    const std::string base = conv->output(0)->name();
    FusedNodeSpec spec;
    spec.opType = "Conv";
    spec.name = conv->name();
    spec.inputs = {m->value("x"), g.addInitializer(base + "_weight_bnfold", folded->weights),
                   g.addInitializer(base + "_bias_bnfold", folded->bias)};
    spec.outputs = {bn.output(0)};
    spec.attrs = conv->attributes();
    const std::vector<Value*> oldConstants{wValue, bValue, bn.input(1), bn.input(2), bn.input(3), bn.input(4)};
    Node* fused = fuseNodes({conv, &bn}, spec, name());
    for (Value* v : oldConstants) eraseIfDeadInitializer(v);
    return fused;
  }
};

}  // namespace

std::shared_ptr<FusionRule> makeConvBatchNormFusion() { return std::make_shared<ConvBatchNormFusion>(); }

}  // namespace kiln
