// Which unit of the NPU runs each standard op. Mirrors how GE places ops: matrix engines (Cube) for
// convolution and matrix products, the Vector unit for elementwise/normalisation/reduction work, AI CPU for
// data-dependent or control-flow ops the AI Core cannot run, and the host for pure shape bookkeeping that never
// becomes a device task.
#include <string_view>
#include <unordered_map>

#include "ir/opdefs/op_registry.h"

namespace kiln {

ComputeUnit defaultComputeUnit(std::string_view domain, std::string_view type) {
  static const std::unordered_map<std::string_view, ComputeUnit> table = {
      // Cube
      {"Conv", ComputeUnit::Cube}, {"ConvTranspose", ComputeUnit::Cube}, {"ConvInteger", ComputeUnit::Cube},
      {"QLinearConv", ComputeUnit::Cube}, {"MatMul", ComputeUnit::Cube}, {"MatMulInteger", ComputeUnit::Cube},
      {"QLinearMatMul", ComputeUnit::Cube}, {"Gemm", ComputeUnit::Cube}, {"Einsum", ComputeUnit::Cube},
      {"LSTM", ComputeUnit::Cube}, {"GRU", ComputeUnit::Cube}, {"RNN", ComputeUnit::Cube},
      {"Attention", ComputeUnit::Cube}, {"DeformConv", ComputeUnit::Cube},
      // Host: shape bookkeeping, no data movement on the device
      {"Shape", ComputeUnit::Host}, {"Size", ComputeUnit::Host}, {"Reshape", ComputeUnit::Host},
      {"Squeeze", ComputeUnit::Host}, {"Unsqueeze", ComputeUnit::Host}, {"Flatten", ComputeUnit::Host},
      {"Identity", ComputeUnit::Host}, {"Constant", ComputeUnit::Host}, {"Optional", ComputeUnit::Host},
      {"OptionalHasElement", ComputeUnit::Host}, {"OptionalGetElement", ComputeUnit::Host},
      // AI CPU: data-dependent output shapes, control flow, sequences, irregular indexing
      {"NonZero", ComputeUnit::AiCpu}, {"NonMaxSuppression", ComputeUnit::AiCpu}, {"TopK", ComputeUnit::AiCpu},
      {"Unique", ComputeUnit::AiCpu}, {"If", ComputeUnit::AiCpu}, {"Loop", ComputeUnit::AiCpu},
      {"Scan", ComputeUnit::AiCpu}, {"Compress", ComputeUnit::AiCpu}, {"RoiAlign", ComputeUnit::AiCpu},
      {"MaxRoiPool", ComputeUnit::AiCpu}, {"ScatterND", ComputeUnit::AiCpu}, {"ScatterElements", ComputeUnit::AiCpu},
      {"Scatter", ComputeUnit::AiCpu}, {"GatherND", ComputeUnit::AiCpu}, {"RandomNormal", ComputeUnit::AiCpu},
      {"RandomUniform", ComputeUnit::AiCpu}, {"RandomNormalLike", ComputeUnit::AiCpu},
      {"RandomUniformLike", ComputeUnit::AiCpu}, {"Multinomial", ComputeUnit::AiCpu}, {"Bernoulli", ComputeUnit::AiCpu},
      {"StringNormalizer", ComputeUnit::AiCpu}, {"TfIdfVectorizer", ComputeUnit::AiCpu},
      {"SequenceAt", ComputeUnit::AiCpu}, {"SequenceConstruct", ComputeUnit::AiCpu},
      {"SequenceEmpty", ComputeUnit::AiCpu}, {"SequenceErase", ComputeUnit::AiCpu},
      {"SequenceInsert", ComputeUnit::AiCpu}, {"SequenceLength", ComputeUnit::AiCpu},
      {"SplitToSequence", ComputeUnit::AiCpu}, {"ConcatFromSequence", ComputeUnit::AiCpu},
      {"SequenceMap", ComputeUnit::AiCpu}, {"CumSum", ComputeUnit::AiCpu}, {"CumProd", ComputeUnit::AiCpu}, {"Range", ComputeUnit::AiCpu},
      {"ConstantOfShape", ComputeUnit::AiCpu}, {"EyeLike", ComputeUnit::AiCpu}, {"Det", ComputeUnit::AiCpu},
  };
  // GE's own op names, as the .om reader imports them (domain "ge"): its matrix ops run on the cube, the graph's
  // bookkeeping ops (inputs, constants, the output node) on the host, the rest are AI Core vector kernels.
  static const std::unordered_map<std::string_view, ComputeUnit> geTable = {
      {"Conv2D", ComputeUnit::Cube}, {"Conv2DBackpropInput", ComputeUnit::Cube}, {"Conv3D", ComputeUnit::Cube},
      {"DepthwiseConv2D", ComputeUnit::Cube}, {"MatMul", ComputeUnit::Cube}, {"MatMulV2", ComputeUnit::Cube},
      {"BatchMatMul", ComputeUnit::Cube}, {"BatchMatMulV2", ComputeUnit::Cube}, {"FullyConnection", ComputeUnit::Cube},
      {"Data", ComputeUnit::Host}, {"Const", ComputeUnit::Host}, {"Constant", ComputeUnit::Host},
      {"NetOutput", ComputeUnit::Host}, {"Variable", ComputeUnit::Host},
  };
  if (domain == "ge") {
    auto it = geTable.find(type);
    return it == geTable.end() ? ComputeUnit::Vector : it->second;
  }
  if (!domain.empty() && domain != "ai.onnx") {
    if (domain == kKilnDomain) return ComputeUnit::Vector;
    return ComputeUnit::AiCpu;  // unknown domains: assume the general-purpose CPU path
  }
  auto it = table.find(type);
  return it == table.end() ? ComputeUnit::Vector : it->second;
}

}  // namespace kiln
