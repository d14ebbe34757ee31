// CastRemoval (Stage 2, after RefineRunningPrecision): Casts that change nothing go.
//  - Cast to the element type its input already has.
//  - Cast(a -> b) followed by Cast(b -> a) when b holds every value of a (fp16 -> fp32 -> fp16, int32 -> int64 ->
//    int32): the round trip is lossless, so the second Cast's consumers read the original; the first Cast goes too
//    when nothing else reads it. A narrowing round trip (fp32 -> fp16 -> fp32) rounds, so it stays.
// A Cast whose output is a graph output stays (the output keeps its name and declared type). Counter: casts_removed.
#include "passes/optimize/optimize_passes.h"
#include "passes/optimize/transdata_support.h"

namespace kiln {
namespace {

int floatMantissaBits(DType t) {
  switch (t) {
    case DType::Float16: return 11;
    case DType::BFloat16: return 8;
    case DType::Float: return 24;
    case DType::Double: return 53;
    default: return 0;
  }
}

int floatExponentBits(DType t) {
  switch (t) {
    case DType::Float16: return 5;
    case DType::BFloat16:
    case DType::Float: return 8;
    case DType::Double: return 11;
    default: return 0;
  }
}

bool isSigned(DType t) {
  return t == DType::Int8 || t == DType::Int16 || t == DType::Int32 || t == DType::Int64;
}

// Does b represent every value of a exactly?
bool holdsEvery(DType a, DType b) {
  if (a == b) return true;
  if (a == DType::Bool) return isInteger(b) || isFloating(b);  // 0 and 1 survive anywhere (and come back as bool)
  const int bitsA = dtypeSize(a) * 8;
  if (isFloating(a))
    return isFloating(b) && floatMantissaBits(b) >= floatMantissaBits(a) &&
           floatExponentBits(b) >= floatExponentBits(a);
  if (!isInteger(a)) return false;
  const int magnitude = isSigned(a) ? bitsA - 1 : bitsA;  // value bits besides the sign
  if (isFloating(b)) return floatMantissaBits(b) >= magnitude;
  if (!isInteger(b)) return false;
  const int bitsB = dtypeSize(b) * 8;
  if (isSigned(a)) return isSigned(b) && bitsB >= bitsA;
  return isSigned(b) ? bitsB > bitsA : bitsB >= bitsA;
}

class CastRemoval final : public NodePass {
 public:
  std::string name() const override { return "CastRemoval"; }

 protected:
  bool visit(Node& n, PassContext&, NodeWorklist& work, PassResult& r) override {
    if (!isCast(&n) || !n.input(0) || !n.output(0) || n.output(0)->isGraphOutput()) return false;
    Value* x = n.input(0);
    const auto to = dtypeFromOnnx(static_cast<int>(n.attrInt("to", 0)));
    if (!to || !x->type().isTensor()) return false;
    Graph& g = *n.graph();
    if (x->type().dtype == *to) {
      bypass(g, n, x, work, r);
      return true;
    }
    Node* first = x->producer();
    if (!isCast(first) || !first->input(0) || !first->input(0)->type().isTensor()) return false;
    Value* origin = first->input(0);
    if (origin->type().dtype != *to || !holdsEvery(*to, x->type().dtype)) return false;
    bypass(g, n, origin, work, r);
    if (!x->hasUses() && !x->isGraphOutput()) {
      g.eraseNode(first);
      r.add("casts_removed");
    }
    return true;
  }

 private:
  void bypass(Graph& g, Node& cast, Value* with, NodeWorklist& work, PassResult& r) {
    for (const Use& u : cast.output(0)->uses()) work.touched(u.node);
    if (Node* p = with->producer()) work.touched(p);
    g.replaceAllUsesWith(cast.output(0), with);
    g.eraseNode(&cast);
    r.add("casts_removed");
  }
};

}  // namespace

std::unique_ptr<Pass> makeCastRemovalPass() { return std::make_unique<CastRemoval>(); }

}  // namespace kiln
