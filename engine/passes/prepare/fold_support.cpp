#include "passes/prepare/fold_support.h"

#include "ir/graph.h"
#include "options/options.h"
#include "passes/pass.h"

namespace kiln {

const Tensor* constantData(const Value* v) {
  if (!v || v->producer() || v->isGraphInput()) return nullptr;
  return v->constant();
}

Value* replaceWithInitializer(Value* out, Tensor data, NodeWorklist& work) {
  Graph& g = *out->graph();
  const ValueType declared = out->type();
  Value* init = g.addInitializer(out->name(), std::move(data));
  if (declared.format != Format::ND) {  // keep a layout the value was already given, and its origin
    ValueType t = init->type();
    t.format = declared.format;
    t.originShape = declared.originShape;
    t.originFormat = declared.originFormat;
    init->setType(std::move(t));
  }
  init->setDocString(out->docString());
  for (const Use& u : out->uses()) work.touched(u.node);
  g.replaceAllUsesWith(out, init);
  return init;
}

void eraseIfDeadInitializer(Value* v) {
  if (v && !v->producer() && v->constant() && !v->hasUses() && !v->isGraphInput() && !v->isGraphOutput())
    v->graph()->eraseValue(v);
}

int64_t optionInt(const Options& options, const std::string& key, int64_t fallback) {
  return Options::spec(key) ? options.getInt(key) : fallback;
}

bool optionBool(const Options& options, const std::string& key, bool fallback) {
  return Options::spec(key) ? options.getBool(key) : fallback;
}

bool isOnnxDomain(const Node& n) { return n.domain().empty() || n.domain() == "ai.onnx"; }

}  // namespace kiln
