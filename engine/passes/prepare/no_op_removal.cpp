// NoOpRemoval: removes ops that compute nothing at inference time — Identity, Dropout (its mask unused),
// Cast to the same type, identity Transpose, shape ops whose output shape equals their input's (Reshape, Squeeze,
// Unsqueeze, Flatten, Expand), and one-input Concat/Sum/Max/Min/Mean. GE does the same in its prepare stage.
#include "ir/graph.h"
#include "passes/prepare/bypass.h"
#include "passes/prepare/prepare_passes.h"

namespace kiln {
namespace {

bool sameStaticType(const Value* a, const Value* b) {
  return a && b && a->type().isTensor() && b->type().isTensor() && a->type().dtype == b->type().dtype &&
         a->type().dtype != DType::Undefined && a->type().shape.isStatic() && a->type().shape == b->type().shape;
}

bool constantFalse(const Value* v) {
  if (!v) return true;  // absent training_mode = inference
  const Tensor* t = v->constant();
  if (!t && v->producer() && v->producer()->opType() == "Constant")
    if (const Attribute* a = v->producer()->attr("value")) t = a->get<Tensor>();
  if (!t || t->numel() != 1) return false;
  auto vals = t->toInt64();
  return !vals.empty() && vals[0] == 0;
}

class NoOpRemoval final : public NodePass {
 public:
  std::string name() const override { return "NoOpRemoval"; }

 protected:
  bool visit(Node& n, PassContext&, NodeWorklist&, PassResult& r) override {
    if (!n.domain().empty() || n.numOutputs() == 0 || !n.output(0)) return false;
    const std::string& op = n.opType();
    Value* in = n.input(0);
    Value* out = n.output(0);
    const char* counter = nullptr;
    if (op == "Identity") {
      counter = "identity";
    } else if (op == "Dropout") {
      const bool maskUnused = n.numOutputs() < 2 || !n.output(1) ||
                              (!n.output(1)->hasUses() && !n.output(1)->isGraphOutput());
      if (maskUnused && constantFalse(n.input(2)) && n.attrInt("is_test", 1) != 0) counter = "dropout";
    } else if (op == "Cast") {
      if (in && in->type().isTensor() && in->type().dtype != DType::Undefined &&
          n.attrInt("to", -1) == dtypeToOnnx(in->type().dtype))
        counter = "cast";
    } else if (op == "Transpose") {
      const auto perm = n.attrInts("perm");
      bool identity = !perm.empty();
      for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == static_cast<int64_t>(i);
      if (identity) counter = "transpose";
    } else if (op == "Reshape" || op == "Squeeze" || op == "Unsqueeze" || op == "Flatten" || op == "Expand") {
      if (sameStaticType(in, out)) counter = "reshape_like";
    } else if ((op == "Concat" || op == "Sum" || op == "Max" || op == "Min" || op == "Mean") && n.numInputs() == 1) {
      counter = "single_input";
    }
    if (!counter || !bypassNode(n, in, out)) return false;
    r.add(counter);
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> makeNoOpRemovalPass() { return std::make_unique<NoOpRemoval>(); }

}  // namespace kiln
