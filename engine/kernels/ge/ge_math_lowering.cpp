// GE's element-wise ops as ONNX ops. Operands broadcast NumPy-style on their logical shapes, as GE's (TensorFlow's)
// element-wise ops do.
//   unary      Relu, Relu6 -> Clip(0, 6), Sigmoid, Tanh, Exp, Log, Sqrt, Rsqrt -> 1 / Sqrt, Abs, Neg, Square -> x·x,
//              Reciprocal, Floor, Ceil, Erf, Sin, Cos, Sign, Round, Softplus, Softsign, Elu (alpha),
//              LeakyRelu (negative_slope), Swish (scale: x · sigmoid(scale · x)), LogicalNot
//   binary     Add, AddV2, Sub, Mul, RealDiv / Div, Maximum, Minimum, Pow, SquaredDifference -> (a - b)², Equal,
//              NotEqual, Greater, GreaterEqual, Less, LessEqual, LogicalAnd, LogicalOr
//   AddN       -> Sum
//   Eltwise    Caffe's: mode 0 product, 1 sum (each operand times its `coeff`), 2 max
//   BiasAdd    bias along the channel axis of data_format (NCHW: axis 1; NHWC: the last)
#include "kernels/ge/ge_lowering_context.h"

namespace kiln::geops {
namespace {

const std::map<std::string, std::string>& sameUnary() {
  static const std::map<std::string, std::string> m = {
      {"Relu", "Relu"},       {"Sigmoid", "Sigmoid"},   {"Tanh", "Tanh"},   {"Exp", "Exp"},
      {"Log", "Log"},         {"Sqrt", "Sqrt"},         {"Abs", "Abs"},     {"Neg", "Neg"},
      {"Reciprocal", "Reciprocal"}, {"Floor", "Floor"}, {"Ceil", "Ceil"},   {"Erf", "Erf"},
      {"Sin", "Sin"},         {"Cos", "Cos"},           {"Sign", "Sign"},   {"Round", "Round"},
      {"Softplus", "Softplus"}, {"Softsign", "Softsign"}, {"LogicalNot", "Not"}};
  return m;
}

const std::map<std::string, std::string>& sameBinary() {
  static const std::map<std::string, std::string> m = {
      {"Add", "Add"},         {"AddV2", "Add"},          {"Sub", "Sub"},          {"Mul", "Mul"},
      {"RealDiv", "Div"},     {"Div", "Div"},            {"Maximum", "Max"},      {"Minimum", "Min"},
      {"Pow", "Pow"},         {"Equal", "Equal"},        {"Greater", "Greater"},  {"GreaterEqual", "GreaterOrEqual"},
      {"Less", "Less"},       {"LessEqual", "LessOrEqual"}, {"LogicalAnd", "And"}, {"LogicalOr", "Or"}};
  return m;
}

void unary(OpLowering& op) {
  const std::string& type = op.ge().opType();
  Value* x = op.required(0);
  const DType t = op.outputType(0);
  if (auto it = sameUnary().find(type); it != sameUnary().end()) return op.result(0, op.add(it->second, {x}));
  if (type == "Relu6") return op.result(0, op.add("Clip", {x, op.scalar(0, t), op.scalar(6, t)}));
  if (type == "Rsqrt") return op.result(0, op.add("Reciprocal", {op.add("Sqrt", {x})}));
  if (type == "Square") return op.result(0, op.add("Mul", {x, x}));
  if (type == "Elu") return op.result(0, op.add("Elu", {x}, {floatAttr("alpha", op.attrFloat("alpha", 1.0f))}));
  if (type == "LeakyRelu") {
    if (!op.has("negative_slope")) op.fail("its negative_slope is not in the file");
    return op.result(0, op.add("LeakyRelu", {x}, {floatAttr("alpha", op.attrFloat("negative_slope", 0))}));
  }
  if (type == "Swish") {
    const float scale = op.attrFloat("scale", 1.0f);
    Value* s = scale == 1.0f ? x : op.add("Mul", {x, op.scalar(scale, t)});
    return op.result(0, op.add("Mul", {x, op.add("Sigmoid", {s})}));
  }
  op.fail("no unary semantics for " + type);
}

void binary(OpLowering& op) {
  const std::string& type = op.ge().opType();
  Value* a = op.required(0);
  Value* b = op.required(1);
  if (auto it = sameBinary().find(type); it != sameBinary().end()) return op.result(0, op.add(it->second, {a, b}));
  if (type == "NotEqual") return op.result(0, op.add("Not", {op.add("Equal", {a, b})}));
  if (type == "SquaredDifference") {
    Value* d = op.add("Sub", {a, b});
    return op.result(0, op.add("Mul", {d, d}));
  }
  op.fail("no binary semantics for " + type);
}

void addN(OpLowering& op) {
  std::vector<Value*> xs;
  for (size_t i = 0; i < op.numInputs(); ++i) xs.push_back(op.required(i));
  op.result(0, op.add("Sum", xs));
}

void eltwise(OpLowering& op) {
  const int64_t mode = op.attrInt("mode", 1);
  std::vector<Value*> xs;
  for (size_t i = 0; i < op.numInputs(); ++i) xs.push_back(op.required(i));
  if (mode == 0) {
    Value* y = xs[0];
    for (size_t i = 1; i < xs.size(); ++i) y = op.add("Mul", {y, xs[i]});
    return op.result(0, y);
  }
  if (mode == 2) return op.result(0, op.add("Max", xs));
  if (mode != 1) op.fail("Eltwise mode " + std::to_string(mode) + " is none of product, sum, max");
  const Attribute* c = op.ge().attr("coeff");
  const auto* coeff = c ? c->get<std::vector<float>>() : nullptr;
  if (coeff && !coeff->empty()) {
    if (coeff->size() != xs.size()) op.fail("Eltwise has " + std::to_string(coeff->size()) + " coefficients for " +
                                            std::to_string(xs.size()) + " operands");
    for (size_t i = 0; i < xs.size(); ++i)
      if ((*coeff)[i] != 1.0f) xs[i] = op.add("Mul", {xs[i], op.scalar((*coeff)[i], op.outputType(0))});
  }
  op.result(0, xs.size() == 1 ? xs[0] : op.add("Sum", xs));
}

void biasAdd(OpLowering& op) {
  const std::vector<int64_t> x = op.inputDims(0);
  const bool nhwc = op.attrString("data_format", op.inputLayout(0) == Format::NHWC ? "NHWC" : "NCHW") == "NHWC";
  Value* b = op.required(1);
  if (!nhwc && x.size() > 2) {
    std::vector<int64_t> shape(x.size() - 1, 1);
    shape[0] = x[1];
    b = op.reshape(b, shape);
  }
  op.result(0, op.add("Add", {op.required(0), b}));
}

}  // namespace

void addMathLowerings(LoweringTable& t) {
  for (const auto& [k, v] : sameUnary()) t[k] = unary;
  for (const char* k : {"Relu6", "Rsqrt", "Square", "Elu", "LeakyRelu", "Swish"}) t[k] = unary;
  for (const auto& [k, v] : sameBinary()) t[k] = binary;
  t["NotEqual"] = binary;
  t["SquaredDifference"] = binary;
  t["AddN"] = addN;
  t["Eltwise"] = eltwise;
  t["BiasAdd"] = biasAdd;
}

}  // namespace kiln::geops
