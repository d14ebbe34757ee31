// AlgebraicSimplification: identities that exports leave behind — x*1, x+0, x-0, x/1, x^1 (when broadcasting does
// not change x's shape or type), Transpose of a Transpose (composed, or gone when the composition is the
// identity), and a Reshape-like op feeding a Reshape with a fully specified target (the first is skipped).
#include "ir/graph.h"
#include "passes/constant_value.h"
#include "passes/prepare/bypass.h"
#include "passes/prepare/prepare_passes.h"

namespace kiln {
namespace {

bool sameType(const Value* a, const Value* b) {
  return a && b && a->type().isTensor() && a->type().dtype != DType::Undefined && a->type().shape.isStatic() &&
         a->type() == b->type();
}

class AlgebraicSimplification final : public NodePass {
 public:
  std::string name() const override { return "AlgebraicSimplification"; }

 protected:
  bool visit(Node& n, PassContext&, NodeWorklist& work, PassResult& r) override {
    if (!n.domain().empty() || !n.output(0)) return false;
    const std::string& op = n.opType();
    if (op == "Mul" || op == "Add" || op == "Sub" || op == "Div" || op == "Pow") return identityOperand(n, r);
    if (op == "Transpose") return transposeOfTranspose(n, work, r);
    if (op == "Reshape") return reshapeChain(n, work, r);
    return false;
  }

 private:
  // x op c where c is the operation's identity element, and the result is exactly x.
  static bool identityOperand(Node& n, PassResult& r) {
    const std::string& op = n.opType();
    const double unit = (op == "Mul" || op == "Div" || op == "Pow") ? 1.0 : 0.0;
    const bool commutative = op == "Mul" || op == "Add";
    for (size_t xi = 0; xi < 2; ++xi) {
      if (xi == 1 && !commutative) break;
      Value* x = n.input(xi);
      Value* c = n.input(1 - xi);
      if (!isConstantFilledWith(c, unit) || !sameType(x, n.output(0))) continue;
      if (!bypassNode(n, x, n.output(0))) return false;
      r.add("identity_" + op);
      return true;
    }
    return false;
  }

  static bool transposeOfTranspose(Node& outer, NodeWorklist& work, PassResult& r) {
    Value* mid = outer.input(0);
    Node* inner = mid ? mid->producer() : nullptr;
    if (!inner || inner->opType() != "Transpose" || !inner->domain().empty() || inner->graph() != outer.graph())
      return false;
    const auto p1 = inner->attrInts("perm");
    const auto p2 = outer.attrInts("perm");
    if (p1.empty() || p1.size() != p2.size()) return false;
    std::vector<int64_t> q(p2.size());
    bool identity = true;
    for (size_t i = 0; i < q.size(); ++i) {
      if (p2[i] < 0 || p2[i] >= static_cast<int64_t>(p1.size())) return false;
      q[i] = p1[static_cast<size_t>(p2[i])];
      identity = identity && q[i] == static_cast<int64_t>(i);
    }
    Graph& g = *outer.graph();
    Value* x = inner->input(0);
    if (losesElementType(x, mid)) return false;
    if (identity) {
      if (!bypassNode(outer, x, outer.output(0))) return false;
      r.add("transpose_pairs_removed");
    } else {
      g.setNodeInput(&outer, 0, x);
      outer.setAttr("perm", Attribute(q));
      work.touched(&outer);
      r.add("transposes_composed");
    }
    if (!mid->hasUses() && !mid->isGraphOutput()) g.eraseNode(inner);
    return true;
  }

  static bool reshapeChain(Node& outer, NodeWorklist& work, PassResult& r) {
    Value* mid = outer.input(0);
    Node* inner = mid ? mid->producer() : nullptr;
    if (!inner || !inner->domain().empty() || inner->graph() != outer.graph()) return false;
    const std::string& iop = inner->opType();
    if (iop != "Reshape" && iop != "Flatten" && iop != "Squeeze" && iop != "Unsqueeze") return false;
    if (losesElementType(inner->input(0), mid)) return false;
    // The outer target must not refer to its input's dims (0 copies a dim unless allowzero) .
    const Tensor* target = constantValueOf(outer.input(1));
    if (!target) return false;
    for (int64_t d : target->toInt64())
      if (d == 0 && outer.attrInt("allowzero", 0) == 0) return false;
    Graph& g = *outer.graph();
    g.setNodeInput(&outer, 0, inner->input(0));
    work.touched(&outer);
    if (!mid->hasUses() && !mid->isGraphOutput()) g.eraseNode(inner);
    r.add("reshape_chains");
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> makeAlgebraicSimplificationPass() { return std::make_unique<AlgebraicSimplification>(); }

}  // namespace kiln
