// TransDataCastFusion (Stage 2, last of the format passes): a TransData and a Cast next to each other — the Cast's
// output read only by the TransData, or the TransData's only by the Cast — become one kiln:TransDataCast, so the
// tensor crosses HBM once instead of twice (graph inputs cast to fp16 then laid out in 5HD, outputs laid back out and
// cast to fp32). Made with fuseNodes, so the node records fusion.rule, fusion.replaced and the bytes saved.
// An op that only relabels bytes (Reshape, Flatten, Squeeze...) between the TransData and the Cast does not keep
// them apart: the Cast moves before it (a cast commutes with a reshape), as a classifier's output
// TransData -> Reshape -> Cast does. Counter: TransDataCastFusion (fusions made).
#include "ir/aliasing_ops.h"
#include "ir/fused_node.h"
#include "ir/model.h"
#include "passes/optimize/optimize_passes.h"
#include "passes/optimize/transdata_support.h"

namespace kiln {
namespace {

// alias -> cast  becomes  cast -> alias: the cast reads what the alias read and the alias relabels the cast's result;
// the value the rest of the graph reads (and its name) stays the last one's. Returns the cast.
Node* castBefore(Node& alias, Node& cast) {
  Graph& g = *alias.graph();
  Value* in = alias.input(0);
  Value* aliased = alias.output(0);
  Value* casted = cast.output(0);
  const std::string name = casted->name();
  g.replaceAllUsesWith(casted, aliased);  // the graph's readers (and outputs) now read the alias
  g.setNodeInput(&cast, 0, in);
  g.setNodeInput(&alias, 0, casted);
  g.moveBefore(&cast, &alias);
  ValueType castType = in->type();
  castType.dtype = casted->type().dtype;
  ValueType aliasType = aliased->type();
  aliasType.dtype = casted->type().dtype;
  casted->setType(castType);
  aliased->setType(aliasType);
  casted->setName(aliased->name() + "_cast");
  aliased->setName(name);
  return &cast;
}

class TransDataCastFusion final : public NodePass {
 public:
  std::string name() const override { return "TransDataCastFusion"; }

 protected:
  bool visit(Node& t, PassContext& ctx, NodeWorklist& work, PassResult& r) override {
    if (!isTransData(&t) || !t.input(0) || !t.output(0)) return false;
    Node* before = t.input(0)->producer();
    Node* cast = nullptr;
    bool castFirst = false;
    if (isCast(before) && soleConsumer(before->output(0)) == &t && before->input(0)) {
      cast = before;
      castFirst = true;
    } else if (Node* after = soleConsumer(t.output(0)); isCast(after) && after->graph() == t.graph()) {
      cast = after;
    } else if (after && aliasesInput(*after) && after->graph() == t.graph() && after->numOutputs() == 1) {
      Node* c = soleConsumer(after->output(0));
      if (isCast(c) && c->graph() == t.graph()) cast = castBefore(*after, *c);
    }
    if (!cast) return false;
    FusedNodeSpec spec;
    spec.opType = "TransDataCast";
    spec.domain = "kiln";
    spec.inputs = {castFirst ? cast->input(0) : t.input(0)};
    spec.outputs = {castFirst ? t.output(0) : cast->output(0)};
    for (const char* a : {"src_format", "dst_format", "origin_shape"})
      if (const Attribute* v = t.attr(a)) spec.attrs.push_back({a, *v});
    spec.attrs.push_back({"to", Attribute(cast->attrInt("to", 0))});
    spec.attrs.push_back({"cast_first", Attribute(int64_t{castFirst ? 1 : 0})});
    Node* fused = fuseNodes({cast, &t}, spec, name());
    fused->setAnnotation("engine", "aicore");
    fused->setAnnotation("unit", "vector");
    ctx.model.opsets.emplace("kiln", 1);
    work.touched(fused);
    r.add(name());
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> makeTransDataCastFusionPass() { return std::make_unique<TransDataCastFusion>(); }

int64_t countTransData(const Model& m) {
  int64_t n = 0;
  m.graph->forEachGraph([&](const Graph& g) {
    for (const Node* x : g.nodes())
      n += x->domain() == "kiln" && (x->opType() == "TransData" || x->opType() == "TransDataCast");
  });
  return n;
}

}  // namespace kiln
