// TransDataSymmetryElimination (Stage 2, after RefineRunningFormat): a TransData A -> B followed by a TransData B -> A
// over the same logical shape gives back exactly its input (the padding added by the first is dropped by the second),
// so the second one's consumers read the original value; the first goes too when nothing else reads it. GE calls
// this TransOp symmetry elimination. The pair is recognised by types, not names: the second's output has the type
// (element type, layout, shape) of the first's input. Counter: transdata_removed.
#include "passes/optimize/optimize_passes.h"
#include "passes/optimize/transdata_support.h"

namespace kiln {
namespace {

class TransDataSymmetryElimination final : public NodePass {
 public:
  std::string name() const override { return "TransDataSymmetryElimination"; }

 protected:
  bool visit(Node& second, PassContext&, NodeWorklist& work, PassResult& r) override {
    if (!isTransData(&second) || !second.output(0) || second.output(0)->isGraphOutput()) return false;
    Node* first = second.input(0) ? second.input(0)->producer() : nullptr;
    if (!isTransData(first) || !first->input(0)) return false;
    Value* original = first->input(0);
    if (!(second.output(0)->type() == original->type())) return false;
    if (first->attrString("src_format", "") != second.attrString("dst_format", "") ||
        first->attrString("dst_format", "") != second.attrString("src_format", ""))
      return false;
    Graph& g = *second.graph();
    for (const Use& u : second.output(0)->uses()) work.touched(u.node);
    if (Node* p = original->producer()) work.touched(p);
    g.replaceAllUsesWith(second.output(0), original);
    g.eraseNode(&second);
    r.add("transdata_removed");
    if (!first->output(0)->hasUses() && !first->output(0)->isGraphOutput()) {
      g.eraseNode(first);
      r.add("transdata_removed");
    }
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> makeTransDataSymmetryEliminationPass() {
  return std::make_unique<TransDataSymmetryElimination>();
}

}  // namespace kiln
