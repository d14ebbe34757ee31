#pragma once
// Small predicates the Cast and TransData cleanup passes share.
#include "ir/graph.h"

namespace kiln {

inline bool isTransData(const Node* n) { return n && n->domain() == "kiln" && n->opType() == "TransData"; }

inline bool isCast(const Node* n) {
  return n && n->domain().empty() && n->opType() == "Cast" && n->numOutputs() == 1;
}

// The one node reading v, or null when v has several uses (or none) or is a graph output.
inline Node* soleConsumer(const Value* v) {
  if (!v || v->isGraphOutput() || v->uses().size() != 1) return nullptr;
  return v->uses().front().node;
}

}  // namespace kiln
