#include "passes/prepare/bypass.h"

#include "ir/graph.h"

namespace kiln {

bool bypassNode(Node& node, Value* in, Value* out) {
  Graph& g = *node.graph();
  if (!in || !out || in == out || losesElementType(in, out)) return false;
  for (Value* other : node.outputs())
    if (other && other != out && (other->hasUses() || other->isGraphOutput())) return false;
  if (out->isGraphOutput()) {
    // Keep the output's name: `in` takes it over when it is an ordinary intermediate of this graph.
    if (in->graph() != &g || !in->producer() || in->isGraphOutput() || in->isGraphInput()) return false;
    in->setName(out->name());
  }
  g.replaceAllUsesWith(out, in);
  g.eraseNode(&node);
  return true;
}

bool losesElementType(const Value* in, const Value* out) {
  return in && out && out->type().isTensor() && out->type().dtype != DType::Undefined &&
         (!in->type().isTensor() || in->type().dtype == DType::Undefined);
}

}  // namespace kiln
