#include "passes/optimize/conversion_support.h"

#include "ir/graph.h"

namespace kiln {

std::string conversionNodeName(const Value& in, const Node* before, const std::string& what) {
  // The scope of the node it serves: its producer's, else its consumer's (a graph input's conversion).
  const Node* anchor = in.producer() ? in.producer() : before;
  const std::string& anchorName = anchor ? anchor->name() : std::string();
  const size_t scopeEnd = anchorName.rfind('/');
  const std::string scope = scopeEnd == std::string::npos ? std::string() : anchorName.substr(0, scopeEnd + 1);
  const size_t leafStart = in.name().rfind('/');
  const std::string leaf = leafStart == std::string::npos ? in.name() : in.name().substr(leafStart + 1);
  return scope + leaf + "_" + what;
}

Node* insertConversion(Graph& g, const std::string& op, const std::string& domain, Value* in, const std::string& what,
                       const std::string& outName, Node* before) {
  Node* n = g.addNode(op, {in}, {outName}, conversionNodeName(*in, before, what), domain, before);
  n->setAnnotation("engine", "aicore");
  n->setAnnotation("unit", "vector");
  return n;
}

Node* nodeInGraph(Graph& g, Node* n) {
  while (n->graph() != &g && n->graph()->owner()) n = n->graph()->owner();
  return n;
}

void rewireSubgraphUses(Graph& g, const std::vector<Value*>& values,
                        const std::function<Value*(Value*, Node*)>& convert) {
  for (Value* v : values) {
    const std::vector<Use> uses = v->uses();  // rewiring edits the list
    for (const Use& u : uses)
      if (u.node->graph() != &g) g.setNodeInput(u.node, u.index, convert(v, nodeInGraph(g, u.node)));
  }
}

void replaceGraphOutputs(Graph& g, const std::function<bool(Value*)>& affected,
                         const std::function<Value*(Value*)>& convert,
                         const std::function<std::string(Value*)>& suffix) {
  std::vector<Value*> outs = g.outputs();
  bool changed = false;
  for (Value*& v : outs) {
    if (!affected(v)) continue;
    const std::string name = v->name();
    Value* replacement = convert(v);
    v->setName(name + suffix(v));
    replacement->setName(name);
    v = replacement;
    changed = true;
  }
  if (changed) g.setOutputs(outs);
}

Value* ConstantCopies::add(Graph& g, Value* original, Tensor data, Format format, const std::string& suffix) {
  Value* copy = g.addInitializer(original->name() + suffix, std::move(data));
  // A blocked copy remembers the original's shape and layout (its origin); the copy's own dims are physical, its
  // element type the data's (a weight converted to fp16 is a copy too).
  ValueType logical = original->type();
  logical.dtype = copy->type().dtype;
  copy->setType(logical.storedAs(format, copy->type().shape));
  copies_.emplace_back(original, copy);
  return copy;
}

void ConstantCopies::retire(Graph& g) {
  for (auto& [original, copy] : copies_) {
    if (!original || original->hasUses() || original->isGraphOutput() || original->isGraphInput()) continue;
    if (!copy->hasUses()) continue;  // the copy itself was replaced again (or undone): it goes below
    Value* gone = original;  // `original` itself is nulled below
    const std::string name = gone->name();
    g.eraseValue(gone);
    for (auto& other : copies_)
      if (other.first == gone) other.first = nullptr;
    copy->setName(name);
  }
  for (auto& entry : copies_) {
    Value* copy = entry.second;
    if (!copy || copy->hasUses() || copy->isGraphOutput()) continue;
    for (auto& other : copies_) {
      if (other.first == copy) other.first = nullptr;
      if (other.second == copy) other.second = nullptr;
    }
    g.eraseValue(copy);
  }
  copies_.clear();
}

}  // namespace kiln
