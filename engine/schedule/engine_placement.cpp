#include "schedule/engine_placement.h"

#include "ir/graph.h"
#include "ir/model.h"
#include "ir/opdefs/op_registry.h"

namespace kiln {
namespace {

std::string engineOf(ComputeUnit u) {
  switch (u) {
    case ComputeUnit::Cube:
    case ComputeUnit::Vector: return "aicore";
    case ComputeUnit::AiCpu: return "aicpu";
    case ComputeUnit::Host: return "host";
  }
  return "aicore";
}

// Element types the AI Core's vector and cube units have no kernels for.
bool aiCoreLacks(DType t) {
  switch (t) {
    case DType::Int64:
    case DType::UInt64:
    case DType::Double:
    case DType::String:
    case DType::Complex64:
    case DType::Complex128: return true;
    default: return false;
  }
}

}  // namespace

Placement placementOf(const Node& n, const Model& m) {
  const OpDef* def = OpRegistry::global().find(n.domain(), n.opType(), m.opsetFor(n.domain()));
  if (!def) return {"unsupported", "", ""};
  Placement p{engineOf(def->unit), std::string(computeUnitName(def->unit)), ""};
  if (p.engine != "aicore") return p;
  for (const Value* out : n.outputs())
    if (out && aiCoreLacks(out->type().dtype)) {
      p = {"aicpu", "aicpu",
           "produces " + std::string(dtypeName(out->type().dtype)) + " data, which AI Core kernels do not compute"};
      break;
    }
  return p;
}

bool annotatePlacement(Node& n, const Placement& p) {
  const bool changed =
      n.annotation("engine") != p.engine || n.annotation("unit") != p.unit || n.annotation("engine.reason") != p.reason;
  if (!changed) return false;
  n.setAnnotation("engine", p.engine);
  if (p.unit.empty()) n.eraseAnnotation("unit"); else n.setAnnotation("unit", p.unit);
  if (p.reason.empty()) n.eraseAnnotation("engine.reason"); else n.setAnnotation("engine.reason", p.reason);
  return true;
}

}  // namespace kiln
