// CommonSubexpressionElimination: two nodes with the same op, attributes and inputs compute the same thing; the
// later one's uses move to the earlier one. Identical initializers are merged first so that Shape/Gather chains
// over duplicated constants collapse too. Random ops and nodes with subgraphs are left alone.
#include <functional>
#include <unordered_map>

#include "ir/graph.h"
#include "ir/model.h"
#include "passes/prepare/prepare_passes.h"

namespace kiln {
namespace {

bool isRandom(const Node& n) {
  const std::string& op = n.opType();
  return op.rfind("Random", 0) == 0 || op == "Multinomial" || op == "Bernoulli" || op == "Dropout";
}

std::string signature(const Node& n) {
  std::string key = n.domain() + ":" + n.opType() + "(";
  for (const Value* in : n.inputs()) key += (in ? std::to_string(in->id()) : "-") + ",";
  key += ")";
  for (const auto& a : n.attributes()) key += a.name + "=" + a.value.toString() + ";";
  return key;
}

bool sameComputation(const Node& a, const Node& b) {
  if (a.opType() != b.opType() || a.domain() != b.domain() || a.inputs() != b.inputs() ||
      a.numOutputs() != b.numOutputs() || a.attributes().size() != b.attributes().size())
    return false;
  for (const auto& attr : a.attributes()) {
    const Attribute* other = b.attr(attr.name);
    if (!other || !(*other == attr.value)) return false;
  }
  return true;
}

class CommonSubexpressionElimination final : public Pass {
 public:
  std::string name() const override { return "CommonSubexpressionElimination"; }

  PassResult run(PassContext& ctx) override {
    PassResult r;
    ctx.model.graph->forEachGraph([&](Graph& g) {
      mergeInitializers(g, r);
      mergeNodes(g, r);
    });
    return r;
  }

 private:
  static void mergeInitializers(Graph& g, PassResult& r) {
    std::unordered_map<std::string, std::vector<Value*>> byContent;
    for (Value* v : g.initializers()) {
      if (v->isGraphInput() || v->isGraphOutput()) continue;
      const Tensor& t = *v->constant();
      if (t.dtype() == DType::String || t.byteSize() > (64u << 10)) continue;  // big weights are rarely duplicated; hashing them costs
      std::string key = std::string(dtypeName(t.dtype())) + Shape::ofStatic(t.dims()).toString() + ":";
      key += std::to_string(std::hash<std::string_view>()(
          std::string_view(reinterpret_cast<const char*>(t.data()), t.byteSize())));
      auto& bucket = byContent[key];
      Value* same = nullptr;
      for (Value* c : bucket)
        if (*c->constant() == t) same = c;
      if (!same) {
        bucket.push_back(v);
        continue;
      }
      g.replaceAllUsesWith(v, same);
      g.eraseValue(v);
      r.add("initializers_merged");
    }
  }

  static void mergeNodes(Graph& g, PassResult& r) {
    auto order = g.topologicalOrder();
    if (!order) return;
    std::unordered_map<std::string, std::vector<Node*>> seen;
    for (Node* n : *order) {
      if (isRandom(*n) || !n->subgraphs().empty() || n->numOutputs() == 0) continue;
      auto& bucket = seen[signature(*n)];
      Node* first = nullptr;
      for (Node* c : bucket)
        if (sameComputation(*c, *n)) first = c;
      if (!first) {
        bucket.push_back(n);
        continue;
      }
      bool interface = false;
      for (size_t i = 0; i < n->numOutputs(); ++i)
        if (n->output(i) && (n->output(i)->isGraphOutput() || !first->output(i))) interface = true;
      if (interface) continue;  // the model's outputs keep their names
      for (size_t i = 0; i < n->numOutputs(); ++i)
        if (n->output(i)) g.replaceAllUsesWith(n->output(i), first->output(i));
      g.eraseNode(n);
      r.add("nodes_merged");
    }
  }
};

}  // namespace

std::unique_ptr<Pass> makeCommonSubexpressionEliminationPass() {
  return std::make_unique<CommonSubexpressionElimination>();
}

}  // namespace kiln
