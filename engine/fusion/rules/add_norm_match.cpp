#include "fusion/rules/add_norm_match.h"

#include "ir/fused_node.h"
#include "fusion/pattern.h"
#include "ir/graph.h"
#include "ir/opdefs/op_registry.h"

namespace kiln {

Node* fuseAddNorm(Node& norm, const std::string& fusedOpType, const std::string& rule) {
  Value* sum = norm.input(0);
  Node* add = sum ? sum->producer() : nullptr;
  if (!add || !add->hasQualifiedType("Add") || add->graph() != norm.graph() || add->numInputs() != 2) return nullptr;
  if (!add->input(0) || !add->input(1) || !sum->type().shape.rankKnown()) return nullptr;
  for (size_t i = 1; i < norm.numOutputs(); ++i)  // LayerNormalization's Mean / InvStdDev
    if (const Value* o = norm.output(i); o && (o->hasUses() || o->isGraphOutput())) return nullptr;
  for (size_t i = 1; i < norm.numInputs(); ++i)
    if (norm.input(i) && !pattern::constantOf(norm.input(i))) return nullptr;
  // A carries the sum's shape and type; B is added to it (same shape, or broadcast).
  size_t a = 0;
  if (!(add->input(0)->type() == sum->type())) a = 1;
  if (!(add->input(a)->type() == sum->type())) return nullptr;
  // The sum is read by the norm alone, or also elsewhere: then it is the fused node's second output.
  bool sumEscapes = sum->isGraphOutput();
  for (const Use& u : sum->uses()) sumEscapes = sumEscapes || u.node != &norm;

  FusedNodeSpec spec;
  spec.opType = fusedOpType;
  spec.domain = std::string(kKilnDomain);
  spec.name = norm.name();
  spec.inputs = {add->input(a), add->input(1 - a)};
  for (size_t i = 1; i < norm.numInputs(); ++i) spec.inputs.push_back(norm.input(i));
  while (spec.inputs.size() > 2 && !spec.inputs.back()) spec.inputs.pop_back();
  spec.outputs = {norm.output(0)};
  if (sumEscapes) spec.outputs.push_back(sum);
  spec.attrs = {{"axis", Attribute(norm.attrInt("axis", -1))},
                {"epsilon", Attribute(norm.attrFloat("epsilon", 1e-5f))}};
  return fuseNodes({add, &norm}, spec, rule);
}

}  // namespace kiln
