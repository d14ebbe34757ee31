#include "passes/prepare/batchnorm_fold.h"

#include <optional>

#include "ir/graph.h"
#include "passes/prepare/batchnorm_math.h"
#include "passes/prepare/fold_support.h"

namespace kiln {
namespace {

// Gemm: Y = alpha * A' B' + beta * C with B' = transB ? B^T : B, so output feature n is column n of B'.
// The new C absorbs beta (the node's beta becomes 1): C'[r][n] = s[n] * beta * C[r][n] + shift[n].
std::optional<FoldedWeights> foldGemm(const Node& gemm, const Tensor& w, const Tensor* c, const Node& bn) {
  if (w.dims().size() != 2) return std::nullopt;
  const bool transB = gemm.attrInt("transB", 0) != 0;
  const int64_t n = transB ? w.dims()[0] : w.dims()[1];
  const int64_t k = transB ? w.dims()[1] : w.dims()[0];
  const auto a = batchNormAffine(bn, n);
  if (!a) return std::nullopt;
  std::vector<double> wv = w.toDouble();
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < n; ++j)
      wv[static_cast<size_t>(transB ? j * k + i : i * n + j)] *= a->scale[static_cast<size_t>(j)];

  const double beta = gemm.attrFloat("beta", 1.0f);
  std::vector<int64_t> cDims{n};
  int64_t rows = 1, cols = 1;
  std::vector<double> cv;
  if (c) {
    if (c->dims().size() > 2) return std::nullopt;
    cols = c->dims().empty() ? 1 : c->dims().back();
    rows = c->dims().size() == 2 ? c->dims()[0] : 1;
    if (cols != 1 && cols != n) return std::nullopt;
    if (c->dims().size() == 2) cDims = {rows, n};
    cv = c->toDouble();
  }
  std::vector<double> out;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) {
      const double old = c ? cv[static_cast<size_t>(r * cols + (cols == 1 ? 0 : j))] : 0.0;
      out.push_back(a->scale[static_cast<size_t>(j)] * beta * old + a->shift[static_cast<size_t>(j)]);
    }
  return FoldedWeights{tensorInType(w.dtype(), w.dims(), wv), tensorInType(w.dtype(), cDims, out)};
}

class BatchNormFold final : public NodePass {
 public:
  std::string name() const override { return "BatchNormFold"; }

 protected:
  bool visit(Node& bn, PassContext&, NodeWorklist& work, PassResult& result) override {
    if (bn.opType() != "BatchNormalization" || !isOnnxDomain(bn) || !isInferenceBatchNorm(bn)) return false;
    Value* x = bn.input(0);
    Value* y = bn.output(0);
    // The producer's output must feed only this BN: other readers still need the unnormalised values.
    if (!x || !y || x->uses().size() != 1 || x->isGraphOutput()) return false;
    Node* producer = x->producer();
    if (!producer || producer->graph() != bn.graph() || !isOnnxDomain(*producer) || producer->output(0) != x ||
        producer->opType() != "Gemm")
      return false;
    Value* wValue = producer->input(1);
    Value* bValue = producer->input(2);
    const Tensor* w = constantData(wValue);
    const Tensor* b = bValue ? constantData(bValue) : nullptr;
    if (!w || !isFloating(w->dtype()) || (bValue && (!b || b->dtype() != w->dtype()))) return false;
    const std::optional<FoldedWeights> f = foldGemm(*producer, *w, b, bn);
    if (!f || !f->weights.valid() || !f->bias.valid()) return false;

    Graph& g = *bn.graph();
    const std::vector<Value*> oldConstants{wValue, bValue, bn.input(1), bn.input(2), bn.input(3), bn.input(4)};
    // Named after the producer's output, which is unique, so two BNs on a shared weight get distinct names.
    g.setNodeInput(producer, 1, g.addInitializer(x->name() + "_weight_bnfold", f->weights));
    Value* newBias = g.addInitializer(x->name() + "_bias_bnfold", f->bias);
    if (producer->numInputs() > 2)
      g.setNodeInput(producer, 2, newBias);
    else
      g.appendNodeInput(producer, newBias);
    producer->setAttr("beta", Attribute(1.0f));

    const std::string yName = y->name();
    const bool yIsGraphOutput = y->isGraphOutput();
    if (!x->type().known()) x->setType(y->type());
    for (const Use& u : y->uses()) work.touched(u.node);
    g.replaceAllUsesWith(y, x);
    g.eraseNode(&bn);
    if (yIsGraphOutput) x->setName(yName);  // the model's output keeps the name its users know
    for (Value* v : oldConstants) eraseIfDeadInitializer(v);
    work.touched(producer);
    result.add("folded");
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> makeBatchNormFoldPass() { return std::make_unique<BatchNormFold>(); }

}  // namespace kiln
