#include "passes/prepare/constant_folding.h"

#include <set>
#include <unordered_set>

#include "kernels/kernel.h"
#include "ir/graph.h"
#include "ir/model.h"
#include "passes/prepare/fold_support.h"

namespace kiln {
namespace {

// Ops whose value changes from run to run: folding them would freeze one sample.
// A DequantizeLinear of constant integer weights read only as a MatMul / Gemm's second operand: a weight-only
// quantized layer. GE keeps its int4 / int8 weights and dequantizes inside the matmul (WeightQuantBatchMatmulV2);
// folding it would put fp32 weights in the plan. WeightQuantMatMulFusion fuses the pair.
bool isWeightDequantization(const Node& n) {
  if (n.opType() != "DequantizeLinear" || !n.input(0) || !n.input(0)->constant() || !n.output(0)) return false;
  const DType t = n.input(0)->constant()->dtype();
  if (!(t == DType::Int4 || t == DType::UInt4 || t == DType::Int8 || t == DType::UInt8)) return false;
  const Value* w = n.output(0);
  if (!w->hasUses() || w->isGraphOutput()) return false;
  for (const Use& u : w->uses())
    if (!((u.node->opType() == "MatMul" || u.node->opType() == "Gemm") && u.node->domain().empty() && u.index == 1))
      return false;
  return true;
}

bool isRandom(const Node& n) {
  static const std::set<std::string, std::less<>> kRandom = {"RandomNormal",      "RandomUniform", "RandomNormalLike",
                                                             "RandomUniformLike", "Multinomial",   "Bernoulli"};
  return kRandom.count(n.opType()) > 0;
}

// A result that disagrees with the type the graph already declares for the output would make the graph lie about
// itself; such a node is left alone (and reported).
std::string typeMismatch(const Value& out, const Tensor& t) {
  const ValueType& vt = out.type();
  if (!vt.known()) return {};
  if (!vt.isTensor()) return "output '" + out.name() + "' is not a tensor";
  if (vt.dtype != DType::Undefined && vt.dtype != t.dtype())
    return "output '" + out.name() + "' is declared " + std::string(dtypeName(vt.dtype)) + ", kernel gave " +
           std::string(dtypeName(t.dtype()));
  if (!vt.shape.rankKnown()) return {};
  bool same = vt.shape.rank() == t.dims().size();
  for (size_t i = 0; same && i < t.dims().size(); ++i)
    same = !vt.shape[i].isStatic() || vt.shape[i].value == t.dims()[i];
  return same ? std::string()
              : "output '" + out.name() + "' is declared " + vt.shape.toString() + ", kernel gave " +
                    Shape::ofStatic(t.dims()).toString();
}

class ConstantFolding final : public NodePass {
 public:
  std::string name() const override { return "ConstantFolding"; }

 protected:
  void begin(PassContext& ctx) override {
    enabled_ = optionBool(ctx.options, "oo_constant_folding", true);
    limits_.maxOutputBytes = optionInt(ctx.options, kConstantFoldingMaxBytesKey, kConstantFoldingDefaultMaxBytes);
    limits_.opset = ctx.model.opsetFor("");
    reported_.clear();
  }

  bool visit(Node& node, PassContext& ctx, NodeWorklist& work, PassResult& result) override {
    if (!enabled_ || !isOnnxDomain(node) || isRandom(node) || !node.subgraphs().empty() || !hasKernel(node))
      return false;
    // A node nobody reads is dead code, not a constant worth materialising (dead-code elimination removes it).
    bool live = false;
    for (const Value* out : node.outputs()) live = live || (out && (out->hasUses() || out->isGraphOutput()));
    if (!live) return false;
    if (isWeightDequantization(node)) return false;
    std::vector<const Tensor*> inputs;
    for (const Value* in : node.inputs()) {
      const Tensor* t = in ? constantData(in) : nullptr;
      if (in && !t) return false;
      inputs.push_back(t);
    }
    const bool isConstantNode = node.opType() == "Constant";
    // Cheap refusal from the inferred output types before computing anything.
    if (!isConstantNode)
      for (const Value* out : node.outputs())
        if (out && out->type().byteSize().value_or(0) > limits_.maxOutputBytes) return skipTooLarge(node, result);

    std::vector<Tensor> outs;
    try {
      // A Constant's data already exists: no limit applies to turning it into an initializer.
      outs = evaluateNode(node, inputs, isConstantNode ? KernelLimits{} : limits_);
    } catch (const KernelOutputTooLarge&) {
      return skipTooLarge(node, result);
    } catch (const std::exception& e) {
      return reportOnce(node, "evaluation_errors", e.what(), ctx, result);
    }
    if (outs.empty()) return false;  // op or element type without a kernel
    for (size_t i = 0; i < node.numOutputs(); ++i)
      if (const Value* out = node.output(i))
        if (std::string why = typeMismatch(*out, outs[i]); !why.empty())
          return reportOnce(node, "evaluation_errors", why, ctx, result);

    Graph& g = *node.graph();
    const std::vector<Value*> oldInputs = node.inputs();
    for (size_t i = 0; i < node.numOutputs(); ++i)
      if (Value* out = node.output(i)) replaceWithInitializer(out, std::move(outs[i]), work);
    g.eraseNode(&node);
    for (Value* in : oldInputs) eraseIfDeadInitializer(in);
    result.add(isConstantNode ? "constants_to_initializers" : "folded");
    return true;
  }

 private:
  // Counted and reported once per node however often the fixpoint revisits it; not a change of the graph.
  bool reportOnce(const Node& node, const std::string& counter, const std::string& why, PassContext& ctx,
                  PassResult& result) {
    if (!reported_.insert(node.id()).second) return false;
    ++result.counters[counter];
    ctx.warnings.push_back("ConstantFolding: " + node.qualifiedType() + " '" + node.name() + "' left unfolded: " + why);
    return false;
  }
  bool skipTooLarge(const Node& node, PassResult& result) {
    if (reported_.insert(node.id()).second) ++result.counters["skipped_too_large"];
    return false;
  }

  bool enabled_ = true;
  KernelLimits limits_;
  std::unordered_set<NodeId> reported_;
};

}  // namespace

std::unique_ptr<Pass> makeConstantFoldingPass() { return std::make_unique<ConstantFolding>(); }

}  // namespace kiln
