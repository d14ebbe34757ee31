#include "passes/constant_value.h"

#include "ir/graph.h"

namespace kiln {

const Tensor* constantValueOf(const Value* v) {
  if (!v) return nullptr;
  if (const Tensor* t = v->constant()) return t;
  const Node* p = v->producer();
  if (p && p->opType() == "Constant" && p->domain().empty())
    if (const Attribute* a = p->attr("value")) return a->get<Tensor>();
  return nullptr;
}

bool isConstantFilledWith(const Value* v, double x) {
  const Tensor* t = constantValueOf(v);
  if (!t || t->dtype() == DType::String || t->numel() == 0 || t->numel() > (1 << 20)) return false;
  for (double e : t->toDouble())
    if (e != x) return false;
  return true;
}

}  // namespace kiln
