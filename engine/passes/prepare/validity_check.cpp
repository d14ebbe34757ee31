// ValidityCheck: decides which engine runs each op — AI Core (cube or vector unit), AI CPU, or the host — and
// records it on the node ("engine" annotation, with "unit"). Ops no engine supports are tagged "unsupported"
// and reported; they do not fail the run, so the rest of the model can still be seen and compiled. A control-flow
// node ONNX itself calls invalid (control_flow_validity.h) does fail it, as bad input, naming the node.
#include "ir/model.h"
#include "ir/opdefs/onnx_newer_infer.h"
#include "ir/opdefs/op_registry.h"
#include "passes/prepare/control_flow_validity.h"
#include "passes/prepare/prepare_passes.h"
#include "schedule/engine_placement.h"

namespace kiln {
namespace {

// "node 'name' (Op)", or for an unnamed node its op and first output.
std::string nodeLabel(const Node& n) {
  if (!n.name().empty()) return "node '" + n.name() + "' (" + n.opType() + ")";
  return "unnamed " + n.opType() + " node" + (n.output(0) ? " (output '" + n.output(0)->name() + "')" : std::string());
}

class ValidityCheck final : public Pass {
 public:
  std::string name() const override { return "ValidityCheck"; }

  PassResult run(PassContext& ctx) override {
    PassResult r;
    std::map<std::string, int64_t> unsupported;
    std::map<std::string, int64_t> early;  // op type -> the opset that added it
    const Model& m = ctx.model;
    ctx.model.graph->forEachGraph([&](Graph& g) {
      for (Node* n : g.nodes()) {
        if (std::string problem = controlFlowProblem(*n); !problem.empty())
          throw InvalidModelError(nodeLabel(*n) + " " + problem + ": the model is not valid ONNX");
        // A standard op used at an opset before it existed is read as its first version (as ONNX Runtime does):
        // said once per op type.
        if (n->domain().empty())
          if (const OpDef* def = OpRegistry::global().find("", n->opType(), m.opsetFor(""));
              def && def->sinceVersion > m.opsetFor(""))
            early[n->opType()] = def->sinceVersion;
        if (n->domain().empty() && (n->opType() == "DequantizeLinear" || n->opType() == "QuantizeLinear"))
          if (std::string problem = blockedScaleProblem(*n); !problem.empty())
            throw InvalidModelError(nodeLabel(*n) + ": " + problem + ": the model is not valid ONNX");
        const Placement p = placementOf(*n, m);
        if (p.engine == "unsupported") ++unsupported[n->qualifiedType()];
        r.changed = annotatePlacement(*n, p) || r.changed;
        ++r.counters[p.engine];
      }
    });
    for (const auto& [op, since] : early)
      ctx.warnings.push_back("ValidityCheck: " + op + " is not in ai.onnx opset " + std::to_string(m.opsetFor("")) +
                             " (it was added in opset " + std::to_string(since) + "); read as " + op + "-" +
                             std::to_string(since) + ", as ONNX Runtime reads it");
    for (const auto& [op, count] : unsupported)
      ctx.warnings.push_back("ValidityCheck: no engine supports " + op + " (" + std::to_string(count) + " nodes)");
    return r;
  }
};

}  // namespace

std::unique_ptr<Pass> makeValidityCheckPass() { return std::make_unique<ValidityCheck>(); }

}  // namespace kiln
