// SwitchDeadBranchElimination (GE's name): an If whose condition is a constant is replaced by the nodes of the
// branch it would take, inlined into the enclosing graph in place of the If. Branches that hold subgraphs of their
// own are left alone (their captures would need re-scoping).
#include <unordered_map>

#include "ir/graph.h"
#include "passes/constant_value.h"
#include "passes/prepare/prepare_passes.h"

namespace kiln {
namespace {

class SwitchDeadBranchElimination final : public NodePass {
 public:
  std::string name() const override { return "SwitchDeadBranchElimination"; }

 protected:
  bool visit(Node& n, PassContext&, NodeWorklist& work, PassResult& r) override {
    if (n.opType() != "If" || !n.domain().empty()) return false;
    const Tensor* cond = constantValueOf(n.input(0));
    if (!cond || cond->numel() != 1) return false;
    const bool taken = cond->toInt64().at(0) != 0;
    const Attribute* a = n.attr(taken ? "then_branch" : "else_branch");
    const auto* branchPtr = a ? a->get<Attribute::GraphPtr>() : nullptr;
    if (!branchPtr || !*branchPtr) return false;
    Graph& branch = **branchPtr;
    if (!branch.inputs().empty() || branch.outputs().size() != n.numOutputs()) return false;
    for (Node* bn : branch.nodes())
      if (!bn->subgraphs().empty()) return false;
    auto order = branch.topologicalOrder();
    if (!order) return false;

    Graph& g = *n.graph();
    std::unordered_map<const Value*, Value*> remap;  // branch value -> its copy in g
    auto mapped = [&](Value* v) -> Value* {
      if (!v) return nullptr;
      auto it = remap.find(v);
      return it == remap.end() ? v : it->second;  // values of enclosing graphs are used as they are
    };
    for (Value* init : branch.initializers()) remap[init] = g.addInitializer(init->name(), *init->constant());
    for (Node* bn : *order) {
      std::vector<Value*> ins;
      for (Value* v : bn->inputs()) ins.push_back(mapped(v));
      std::vector<std::string> outNames;
      for (Value* v : bn->outputs()) outNames.push_back(v ? v->name() : std::string());
      Node* copy = g.addNode(bn->opType(), ins, outNames, bn->name(), bn->domain(), &n);
      for (const auto& attr : bn->attributes()) copy->setAttr(attr.name, attr.value);
      for (const auto& [k, v] : bn->annotations()) copy->setAnnotation(k, v);
      for (size_t i = 0; i < bn->numOutputs(); ++i) {
        if (!bn->output(i)) {
          g.clearNodeOutput(copy, i);
          continue;
        }
        copy->output(i)->setType(bn->output(i)->type());
        remap[bn->output(i)] = copy->output(i);
      }
      work.touched(copy);
      r.add("nodes_inlined");
    }
    for (size_t i = 0; i < n.numOutputs(); ++i) {
      Value* out = n.output(i);
      if (!out) continue;
      Value* src = mapped(branch.outputs()[i]);
      if (out->isGraphOutput()) {
        // The model's output keeps its name: route through an Identity named like it.
        Node* id = g.addNode("Identity", {src}, {out->name()}, n.name() + "_output", "", &n);
        id->output(0)->setType(out->type());
        src = id->output(0);
      }
      g.replaceAllUsesWith(out, src);
    }
    g.eraseNode(&n);
    r.add("ifs_removed");
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> makeSwitchDeadBranchEliminationPass() {
  return std::make_unique<SwitchDeadBranchElimination>();
}

}  // namespace kiln
