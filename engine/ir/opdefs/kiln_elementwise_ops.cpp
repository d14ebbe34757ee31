// kiln:FusedElementwise, created by ElementwiseChainFusion (UB fusion): a chain of element-wise ops run as one
// Vector kernel whose intermediates stay in the Unified Buffer. Attributes:
//   body  a Graph whose inputs are the node's inputs in order and whose outputs are its outputs; its nodes are the
//         original ONNX ops (no implicit captures), so the emulator can execute the chain op by op.
//   ops   the body's op types in order, for display.
// The outputs take the body's output types: the rule fuses only static shapes, typed when the body was built.
#include <stdexcept>

#include "ir/graph.h"
#include "ir/opdefs/op_registry.h"

namespace kiln {
namespace {

void inferFusedElementwise(Node& n) {
  const Attribute* a = n.attr("body");
  const Attribute::GraphPtr* body = a ? a->get<Attribute::GraphPtr>() : nullptr;
  if (!body || !*body) throw std::runtime_error("FusedElementwise needs a graph attribute 'body'");
  const Graph& g = **body;
  if (g.inputs().size() != n.numInputs() || g.outputs().size() != n.numOutputs())
    throw std::runtime_error("FusedElementwise: body has " + std::to_string(g.inputs().size()) + " inputs and " +
                             std::to_string(g.outputs().size()) + " outputs, the node " +
                             std::to_string(n.numInputs()) + " and " + std::to_string(n.numOutputs()));
  for (size_t i = 0; i < n.numOutputs(); ++i)
    if (Value* out = n.output(i)) out->setType(g.outputs()[i]->type());
}

}  // namespace

void registerKilnElementwiseOps(OpRegistry& registry) {
  OpDef d;
  d.domain = std::string(kKilnDomain);
  d.type = "FusedElementwise";
  d.minInputs = 1;
  d.minOutputs = 1;
  d.unit = ComputeUnit::Vector;
  d.outputNames = {"Y"};
  d.infer = inferFusedElementwise;
  registry.add(std::move(d));
}

}  // namespace kiln
