#pragma once
// A small valid ONNX model with control flow, for the structure and workbench tests: relu → If 'check' → Sigmoid
// 'out'; the then branch is Neg 'then_neg' → Abs 'then_abs', the else branch a Loop 'repeat' (3 trips) whose body
// doubles its carried value (Add 'twice') and passes its condition on (Identity 'keep').
#include <memory>

#include "ir/model.h"

namespace kiln::testing {

struct ControlFlowModel {
  Model model;
  Node *relu = nullptr, *ifNode = nullptr, *thenNeg = nullptr, *loop = nullptr, *twice = nullptr, *out = nullptr;
};

inline std::unique_ptr<ControlFlowModel> makeControlFlowModel() {
  auto cf = std::make_unique<ControlFlowModel>();
  Model& m = cf->model;
  m.opsets = {{"", 17}};
  Graph& g = *m.graph;
  auto f32 = [](std::vector<int64_t> d) { return ValueType::tensor(DType::Float, Shape::ofStatic(d)); };
  auto names = [](const char* n) { return std::vector<std::string>{n}; };
  Value* x = g.addInput("x", f32({1, 8}));
  Value* cond = g.addInput("cond", ValueType::tensor(DType::Bool, Shape::ofStatic({})));
  cf->relu = g.addNode("Relu", {x}, names("r"), "relu");
  cf->ifNode = g.addNode("If", {cond}, names("chosen"), "check");
  auto thenG = g.makeSubgraph("then");
  cf->thenNeg = thenG->addNode("Neg", {cf->relu->output(0)}, names("n"), "then_neg");
  Node* absNode = thenG->addNode("Abs", {cf->thenNeg->output(0)}, names("a"), "then_abs");
  thenG->addOutput(absNode->output(0));
  auto elseG = g.makeSubgraph("else");
  Value* trips = elseG->addInitializer("trips", Tensor::fromVector(DType::Int64, {}, std::vector<int64_t>{3}));
  Value* go = elseG->addInitializer("go", Tensor::fromVector(DType::Bool, {}, std::vector<uint8_t>{1}));
  cf->loop = elseG->addNode("Loop", {trips, go, cf->relu->output(0)}, names("looped"), "repeat");
  auto body = elseG->makeSubgraph("body");
  body->addInput("i", ValueType::tensor(DType::Int64, Shape::ofStatic({})));
  Value* bodyCond = body->addInput("c", ValueType::tensor(DType::Bool, Shape::ofStatic({})));
  Value* acc = body->addInput("acc", f32({1, 8}));
  Node* keep = body->addNode("Identity", {bodyCond}, names("c_out"), "keep");
  cf->twice = body->addNode("Add", {acc, acc}, names("acc_out"), "twice");
  body->addOutput(keep->output(0));
  body->addOutput(cf->twice->output(0));
  cf->loop->setAttr("body", Attribute(body));
  elseG->addOutput(cf->loop->output(0));
  cf->ifNode->setAttr("then_branch", Attribute(thenG));
  cf->ifNode->setAttr("else_branch", Attribute(elseG));
  cf->out = g.addNode("Sigmoid", {cf->ifNode->output(0)}, names("y"), "out");
  g.addOutput(cf->out->output(0));
  return cf;
}

}  // namespace kiln::testing
