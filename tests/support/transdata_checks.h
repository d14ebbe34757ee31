#pragma once
// What the format tests share: counting ops and checking that TransData-like nodes carry the types their own
// inference gives (no InferShape runs after the format passes, so this is what proves their physical shapes).
#include <QString>
#include <QStringList>

#include "ir/graph.h"
#include "ir/model.h"
#include "ir/opdefs/npu_format_ops.h"
#include "ir/opdefs/op_registry.h"

namespace kiln::testing {

inline int countOps(const Model& m, const std::string& qualified) {
  int n = 0;
  m.graph->forEachGraph([&](const Graph& g) {
    for (const Node* x : g.nodes()) n += x->qualifiedType() == qualified;
  });
  return n;
}

// One line per kiln:TransData / kiln:TransDataCast whose recorded output type differs from its inference.
inline QString inconsistentTransData(const Model& m) {
  QStringList out;
  m.graph->forEachGraph([&](const Graph& g) {
    for (Node* n : g.nodes()) {
      if (n->domain() != "kiln" || (n->opType() != "TransData" && n->opType() != "TransDataCast")) continue;
      const ValueType recorded = n->output(0)->type();
      try {
        OpRegistry::global().find("kiln", n->opType(), 1)->infer(*n);
      } catch (const std::exception& e) {
        out << QString::fromStdString(n->name() + ": " + e.what());
        continue;
      }
      if (!(n->output(0)->type() == recorded))
        out << QString::fromStdString(n->name() + ": recorded " + recorded.toString() + ", inferred " +
                                      n->output(0)->type().toString());
      n->output(0)->setType(recorded);
    }
  });
  return out.join("\n");
}

}  // namespace kiln::testing
