// Example plugin: one of each thing the API offers.
//  - AnnotateCost (end of the prepare stage): records each node's estimated FLOPs and bytes moved as annotations,
//    so they show in the history and the inspector.
//  - example:HardSwishX, an op of the plugin's own domain with hand-written inference (output = input type).
//  - HardSwishXFusion (API version 2): x * HardSigmoid(x) with alpha 1/6 and beta 0.5 — HardSwish written out,
//    as exporters of older opsets do — becomes one example:HardSwishX.
#include <cmath>

#include "ir/fused_node.h"
#include "fusion/match_helpers.h"
#include "ir/model.h"
#include "kiln_plugin.h"

namespace {

class AnnotateCost final : public kiln::Pass {
 public:
  std::string name() const override { return "AnnotateCost"; }
  kiln::PassResult run(kiln::PassContext& ctx) override {
    kiln::PassResult r;
    const kiln::Model& m = ctx.model;
    ctx.model.graph->forEachGraph([&](kiln::Graph& g) {
      for (kiln::Node* n : g.nodes()) {
        const kiln::OpCost c = kiln::OpRegistry::global().cost(*n, m.opsetFor(n->domain()));
        const std::string flops = std::to_string(static_cast<long long>(c.flops));
        if (n->annotation("flops") == flops) continue;
        n->setAnnotation("flops", flops);
        n->setAnnotation("bytes", std::to_string(static_cast<long long>(c.bytesRead + c.bytesWritten)));
        r.add("annotated");
      }
    });
    return r;
  }
};

class HardSwishXFusion final : public kiln::FusionRule {
 public:
  std::string name() const override { return "HardSwishXFusion"; }
  std::vector<std::string> anchorTypes() const override { return {"Mul"}; }
  kiln::Node* apply(kiln::Node& mul, kiln::PassContext&) override {
    for (size_t side = 0; side < 2; ++side) {
      kiln::Node* hs = kiln::producerOfType(mul.input(side), "HardSigmoid");
      kiln::Value* x = mul.input(1 - side);
      if (!hs || hs->input(0) != x || !kiln::hasSingleUse(mul.input(side))) continue;
      if (std::abs(hs->attrFloat("alpha", 0.2f) - 1.0f / 6.0f) > 1e-6f || hs->attrFloat("beta", 0.5f) != 0.5f)
        continue;
      kiln::FusedNodeSpec spec;
      spec.opType = "HardSwishX";
      spec.domain = "example";
      spec.inputs = {x};
      spec.outputs = {mul.output(0)};
      return kiln::fuseNodes({hs, &mul}, spec, name());
    }
    return nullptr;
  }
};

void inferSameAsInput(kiln::Node& n) {
  if (!n.input(0) || !n.output(0)) throw std::runtime_error("HardSwishX takes one input and one output");
  n.output(0)->setType(n.input(0)->type());
}

}  // namespace

extern "C" int kiln_plugin_api_version() { return KILN_PLUGIN_API_VERSION; }

extern "C" void kiln_plugin_register(kiln::plugin::Registry& r) {
  r.setName("example-plugin");
  r.addPass(kiln::Stage::Prepare, [] { return std::make_unique<AnnotateCost>(); });
  kiln::OpDef op;
  op.domain = "example";
  op.type = "HardSwishX";
  op.minInputs = op.maxInputs = 1;
  op.minOutputs = op.maxOutputs = 1;
  op.unit = kiln::ComputeUnit::Vector;
  op.inputNames = {"X"};
  op.outputNames = {"Y"};
  op.infer = inferSameAsInput;
  r.addOp(std::move(op));
  r.addFusionRule(std::make_shared<HardSwishXFusion>());
}
