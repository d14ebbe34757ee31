#include "fusion/erase_dead_inputs.h"

#include <utility>

#include "ir/graph.h"
#include "passes/prepare/fold_support.h"

namespace kiln {
namespace {

bool unused(const Value* v) { return !v->hasUses() && !v->isGraphOutput(); }

}  // namespace

void eraseDeadInputs(const std::vector<Value*>& values) {
  // By id, looked up again when taken: a value reached twice may have been erased in between.
  std::vector<std::pair<Graph*, ValueId>> work;
  for (Value* v : values)
    if (v) work.emplace_back(v->graph(), v->id());
  while (!work.empty()) {
    auto [g, id] = work.back();
    work.pop_back();
    Value* v = g->findValue(id);
    if (!v || !unused(v) || v->isGraphInput()) continue;
    Node* p = v->producer();
    if (!p) {
      eraseIfDeadInitializer(v);
      continue;
    }
    if (!p->subgraphs().empty()) continue;
    bool allUnused = true;
    for (const Value* out : p->outputs()) allUnused = allUnused && (!out || unused(out));
    if (!allUnused) continue;
    for (Value* in : p->inputs())
      if (in) work.emplace_back(in->graph(), in->id());
    p->graph()->eraseNode(p);
  }
}

}  // namespace kiln
