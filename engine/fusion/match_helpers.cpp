#include "fusion/match_helpers.h"

#include "ir/graph.h"

namespace kiln {

Node* producerOfType(const Value* v, std::string_view qualifiedType) {
  if (!v || !v->producer()) return nullptr;
  Node* p = v->producer();
  return p->hasQualifiedType(qualifiedType) ? p : nullptr;
}

bool hasSingleUse(const Value* v) { return v && v->uses().size() == 1 && !v->isGraphOutput(); }

}  // namespace kiln
