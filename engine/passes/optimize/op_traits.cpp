// The op tables behind precision and format selection. Fused ops (kiln:Fused*, kiln:Attention, ...) are listed next to
// the ops they replace: a fused Conv wants the same layout as a Conv.
#include "passes/optimize/op_traits.h"

#include <onnx/defs/schema.h>

#include <algorithm>
#include <set>
#include <string_view>

#include "ir/graph.h"
#include "ir/opdefs/op_registry.h"

namespace kiln {
namespace {

using Names = std::set<std::string, std::less<>>;

bool in(const Names& names, const Node& n) { return names.count(n.qualifiedType()) > 0; }

const Names kConv = {"Conv", "kiln:FusedConv"};
const Names kMatMul = {"MatMul", "Gemm", "kiln:FusedMatMul"};
// Same element-wise result in any layout: unary math and activations (Cast too: it keeps the shape)...
const Names kElementwise = {
    "Relu", "LeakyRelu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Elu", "Selu", "Celu", "Softplus", "Softsign",
    "Mish", "Gelu", "Abs", "Neg", "Exp", "Log", "Sqrt", "Reciprocal", "Erf", "Floor", "Ceil", "Round", "Sign", "Sin",
    "Cos", "Not", "Clip", "Identity", "Dropout", "Cast", "kiln:Gelu",
    // ... and n-ary ones, when their inputs share the layout and the shape (or are scalar constants).
    "Add", "Sub", "Mul", "Div", "Max", "Min", "Sum", "Mean", "Pow", "Where", "kiln:FusedElementwise"};
const Names kPool5HD = {"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"};
const Names kNorm5HD = {"BatchNormalization", "InstanceNormalization"};

const Names kWhite = {"Conv",           "ConvTranspose",    "MatMul",        "Gemm",
                      "kiln:FusedConv", "kiln:FusedMatMul", "kiln:Attention"};
// Black list, and why: exp/log/pow overflow fp16 (max 65504 = e^11.1) or lose the small values they map; reductions
// and the norm family sum many terms, where fp16's 11-bit mantissa drops the small addends; Softmax is exp plus a sum.
const Names kBlack = {"Exp", "Log", "Pow", "Softmax", "LogSoftmax", "kiln:BiasSoftmax", "ReduceSum", "ReduceMean",
                      "ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceProd",
                      "CumSum", "LayerNormalization", "kiln:LayerNorm", "kiln:AddLayerNorm", "kiln:RmsNorm",
                      "kiln:AddRmsNorm", "InstanceNormalization", "GroupNormalization", "BatchNormalization",
                      "LpNormalization", "MeanVarianceNormalization"};
// The element type comes from an attribute (Cast's `to`, ConstantOfShape's value...), or the op counts positions,
// which fp16 cannot above 2048 (Range, CumSum, TopK, ArgMax indices).
const Names kKeepsDtype = {"Cast", "CastLike", "ConstantOfShape", "Constant", "EyeLike", "RandomNormal",
                           "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial", "Bernoulli",
                           "QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "Range", "CumSum", "TopK",
                           "NonMaxSuppression", "If", "Loop", "Scan"};

}  // namespace

FormatRole formatRole(const Node& n) {
  if (in(kConv, n)) return FormatRole::Conv5HD;
  if (in(kMatMul, n)) return FormatRole::MatMulNZ;
  if (in(kElementwise, n)) return FormatRole::Elementwise;
  if (in(kPool5HD, n)) return FormatRole::Pool5HD;
  if (in(kNorm5HD, n)) return FormatRole::Norm5HD;
  if (n.domain().empty() && n.opType() == "Concat") return FormatRole::Concat;
  return FormatRole::Logical;
}

PrecisionList precisionList(const Node& n) {
  if (in(kWhite, n)) return PrecisionList::White;
  if (in(kBlack, n)) return PrecisionList::Black;
  return PrecisionList::Grey;
}

bool cubeOnlyFp16(const Node& n) { return in(kWhite, n); }

bool keepsItsDtype(const Node& n) { return in(kKeepsDtype, n) || !n.subgraphs().empty(); }

bool fp32OnlyInput(const Node& n, size_t index) {
  if (n.domain().empty() && n.opType() == "Resize") return index == 1 || index == 2;
  if (n.domain().empty() && n.opType() == "Upsample") return index == 1;
  // Dropout's ratio is a probability with its own type (T1): narrowed to fp16, 0.8 becomes 0.7998 and keeps
  // elements the model drops.
  if (n.domain().empty() && n.opType() == "Dropout") return index == 1;
  return false;
}

bool relabelsOnly(const Node& n) {
  static const Names kRelabel = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"};
  return in(kRelabel, n);
}

bool readsOnlyShape(const Node& n) { return n.domain().empty() && (n.opType() == "Shape" || n.opType() == "Size"); }

bool mayHoldFloat(const Node& n, size_t index, bool input, int64_t opset) {
  const OpDef* def = OpRegistry::global().find(n.domain(), n.opType(), opset);
  if (!def || !def->onnxSchema) return true;
  const auto* schema = static_cast<const onnx::OpSchema*>(def->onnxSchema);
  const auto& formals = input ? schema->inputs() : schema->outputs();
  if (formals.empty()) return true;
  const size_t fi = std::min(index, formals.size() - 1);
  if (fi != index && formals[fi].GetOption() != onnx::OpSchema::Variadic) return true;
  const auto& types = formals[fi].GetTypes();
  if (types.empty()) return true;
  return std::any_of(types.begin(), types.end(), [](onnx::DataType t) {
    return *t == "tensor(float16)" || *t == "tensor(float)" || *t == "tensor(double)" || *t == "tensor(bfloat16)";
  });
}

bool runsOnAiCore(const Node& n, int64_t opset) {
  const std::string engine = n.annotation("engine");
  if (!engine.empty()) return engine == "aicore";
  const OpDef* def = OpRegistry::global().find(n.domain(), n.opType(), opset);
  return def && (def->unit == ComputeUnit::Cube || def->unit == ComputeUnit::Vector);
}

}  // namespace kiln
