#include "layout/node_match.h"

namespace kiln::layout {

namespace {

// The first output's shape of an op node as its view recorded it ("" when unknown).
std::string firstOutputShape(const PassView& v, int64_t node) {
  const ValueRow* best = nullptr;
  for (const ValueRow& val : v.after.values)
    if (val.producerNode && *val.producerNode == node && (!best || val.producerIndex < best->producerIndex))
      best = &val;
  return best && best->shape ? best->dtype + " " + *best->shape : std::string();
}

}  // namespace

int64_t matchNode(const PassView& from, int64_t id, const PassView& to, bool sameModel) {
  const PassViewNode* n = from.node(id);
  if (!n) return 0;
  if (sameModel) {
    const PassViewNode* same = to.node(id);
    if (same && same->opType == n->opType) return id;
  }
  if (!n->name.empty())
    for (const PassViewNode& m : to.nodes)
      if (m.kind == n->kind && m.name == n->name) return m.id;
  if (n->kind != PassViewNode::Kind::Op) return 0;
  const std::string shape = firstOutputShape(from, id);
  int64_t found = 0;
  for (const PassViewNode& m : to.nodes) {
    if (m.kind != PassViewNode::Kind::Op || m.opType != n->opType || m.domain != n->domain) continue;
    if (firstOutputShape(to, m.id) != shape) continue;
    if (found) return 0;  // ambiguous: better no match than a wrong one
    found = m.id;
  }
  return found;
}

}  // namespace kiln::layout
