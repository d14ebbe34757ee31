// Every ai.onnx op version of opsets 18 to 26, for the models today's exporters write (libonnx 1.12 stops at 17);
// 26 is the newest ONNX Runtime 1.30 runs.
// Three kinds, by what the version changed:
//   new        the op did not exist before: signature and inference of our own (onnx_newer_infer.cpp);
//   semantics  inputs, attributes or behaviour changed: our own inference of the new form; the kernels read the
//              version's inputs and attributes themselves (kernels/*.cpp say which versions they follow);
//   types      only the allowed element types widened (bf16 in opset 22; float8 in 19, int4/uint4 in 21, float4e2m1
//              in 23, float8e8m0 in 24, int2/uint2 in 25): the previous version's definition and inference, with
//              the new types accepted.
// Where a version changed semantics, the line below says how (docs/onnx-opsets.md has the whole table).
#include <onnx/defs/schema.h>

#include <algorithm>
#include <climits>
#include <functional>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "ir/dtype.h"
#include "ir/opdefs/onnx_newer_infer.h"
#include "ir/opdefs/op_registry.h"

namespace kiln {
namespace {

using Infer = void (*)(Node&);
namespace no = newer_onnx;

struct Signature {
  int minIn, maxIn, minOut, maxOut;
  std::vector<std::string> inputs, outputs;
};

constexpr int kFloat8[] = {17, 18, 19, 20};
constexpr int kInt4[] = {21, 22};
constexpr int kFloat4 = 23;
constexpr int kBf16 = 16;

class Registrar {
 public:
  explicit Registrar(OpRegistry& r) : r_(r) {}

  // A new op or a version whose semantics changed.
  void def(const char* type, int since, Signature sig, Infer infer, std::vector<int> types = {}) {
    OpDef d;
    d.type = type;
    d.sinceVersion = since;
    d.minInputs = sig.minIn;
    d.maxInputs = sig.maxIn;
    d.minOutputs = sig.minOut;
    d.maxOutputs = sig.maxOut;
    d.inputNames = std::move(sig.inputs);
    d.outputNames = std::move(sig.outputs);
    d.unit = defaultComputeUnit("", type);
    d.infer = infer;
    d.widenedTypes = std::move(types);
    latest_[type] = d;
    r_.addNewerOnnx(std::move(d));
  }

  // A version that only widened the element types: the previous version (ours, or the last libonnx has) with them.
  void types(const char* type, int since, std::initializer_list<int> added) {
    OpDef d;
    if (auto it = latest_.find(type); it != latest_.end()) {
      d = it->second;
    } else {
      const onnx::OpSchema* s = onnx::OpSchemaRegistry::Schema(type, static_cast<int>(OpRegistry::libOnnxOpset()), "");
      if (!s) return;  // not an op libonnx has: a bug in the table (the conformance cases would show it)
      d = opDefFromSchema(s);
    }
    d.sinceVersion = since;
    d.widenedTypes.insert(d.widenedTypes.end(), added.begin(), added.end());
    latest_[type] = d;
    r_.addNewerOnnx(std::move(d));
  }

 private:
  OpRegistry& r_;
  std::map<std::string, OpDef> latest_;
};

std::vector<int> concat(std::initializer_list<std::vector<int>> parts) {
  std::vector<int> all;
  for (const auto& p : parts) all.insert(all.end(), p.begin(), p.end());
  return all;
}

const std::vector<int> kF8(std::begin(kFloat8), std::end(kFloat8));
const std::vector<int> kI4(std::begin(kInt4), std::end(kInt4));

}  // namespace

void registerNewerOnnxOps(OpRegistry& registry) {
  Registrar r(registry);
  const Signature unary{1, 1, 1, 1, {"X"}, {"Y"}};
  const Signature binary{2, 2, 1, 1, {"A", "B"}, {"C"}};

  // ---- opset 18 ----
  for (const char* op : {"BitwiseAnd", "BitwiseOr", "BitwiseXor"}) r.def(op, 18, binary, no::broadcastBinary);
  r.def("BitwiseNot", 18, unary, no::sameAsInput);
  r.def("CenterCropPad", 18, {2, 2, 1, 1, {"input_data", "shape"}, {"output_data"}}, no::centerCropPad);
  r.def("Col2Im", 18, {3, 3, 1, 1, {"input", "image_shape", "block_shape"}, {"output"}}, no::col2Im);
  // GroupNormalization-18: scale and bias have one value per group (21: per channel).
  r.def("GroupNormalization", 18, {3, 3, 1, 1, {"X", "scale", "bias"}, {"Y"}}, no::sameAsInput);
  r.def("Mish", 18, unary, no::sameAsInput);
  // Opset 18 made axes an input of every Reduce op (ReduceSum already at 13); keepdims, noop_with_empty_axes.
  for (const char* op : {"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean",
                         "ReduceMin", "ReduceProd", "ReduceSumSquare"})
    r.def(op, 18, {1, 2, 1, 1, {"data", "axes"}, {"reduced"}}, no::reduce);
  // Split-18: num_outputs splits into ceil(D / n)-sized chunks, the last one smaller.
  r.def("Split", 18, {1, 2, 1, INT_MAX, {"input", "split"}, {"outputs"}}, no::split);
  // Pad-18: an optional axes input names the axes the pads are for.
  r.def("Pad", 18, {2, 4, 1, 1, {"data", "pads", "constant_value", "axes"}, {"output"}}, no::pad);
  // Resize-18: antialias, axes and keep_aspect_ratio_policy.
  r.def("Resize", 18, {1, 4, 1, 1, {"X", "roi", "scales", "sizes"}, {"Y"}}, no::resize);
  // ScatterElements-18 / ScatterND-18: reduction "max" and "min" beside "none", "add", "mul".
  r.def("ScatterElements", 18, {3, 3, 1, 1, {"data", "indices", "updates"}, {"output"}}, no::sameAsInput);
  r.def("ScatterND", 18, {3, 3, 1, 1, {"data", "indices", "updates"}, {"output"}}, no::sameAsInput);
  // LpPool-18: dilations and ceil_mode.
  r.def("LpPool", 18, unary, no::pool);
  // OptionalHasElement-18 / OptionalGetElement-18 also take a plain tensor or sequence (or nothing).
  r.def("OptionalHasElement", 18, {0, 1, 1, 1, {"input"}, {"output"}}, no::optionalHasElement);
  r.def("OptionalGetElement", 18, {1, 1, 1, 1, {"input"}, {"output"}}, no::optionalGetElement);

  // ---- opset 19: float8 types; Cast's saturate; AveragePool's dilations; Pad's wrap; Resize's
  // half_pixel_symmetric; DeformConv ----
  r.def("AveragePool", 19, unary, no::pool);
  r.def("Cast", 19, {1, 1, 1, 1, {"input"}, {"output"}}, no::cast, concat({kF8, {kBf16}}));
  r.def("CastLike", 19, {2, 2, 1, 1, {"input", "target_type"}, {"output"}}, no::castLike, concat({kF8, {kBf16}}));
  r.types("Constant", 19, {17, 18, 19, 20});
  r.def("DeformConv", 19, {3, 5, 1, 1, {"X", "W", "offset", "B", "mask"}, {"Y"}}, no::deformConv);
  r.def("DequantizeLinear", 19, {2, 3, 1, 1, {"x", "x_scale", "x_zero_point"}, {"y"}}, no::dequantizeLinear, kF8);
  r.types("Equal", 19, {8});  // strings
  r.types("Identity", 19, {17, 18, 19, 20});
  r.types("If", 19, {17, 18, 19, 20});
  r.types("Loop", 19, {17, 18, 19, 20});
  r.def("Pad", 19, {2, 4, 1, 1, {"data", "pads", "constant_value", "axes"}, {"output"}}, no::pad);
  r.def("QuantizeLinear", 19, {2, 3, 1, 1, {"x", "y_scale", "y_zero_point"}, {"y"}}, no::quantizeLinear, kF8);
  r.types("Reshape", 19, {17, 18, 19, 20});
  r.def("Resize", 19, {1, 4, 1, 1, {"X", "roi", "scales", "sizes"}, {"Y"}}, no::resize);
  r.types("Scan", 19, {17, 18, 19, 20});
  r.types("Shape", 19, {17, 18, 19, 20});
  r.types("Size", 19, {17, 18, 19, 20});

  // ---- opset 20 ----
  r.def("AffineGrid", 20, {2, 2, 1, 1, {"theta", "size"}, {"grid"}}, no::affineGrid);
  r.def("ConstantOfShape", 20, {1, 1, 1, 1, {"input"}, {"output"}}, no::constantOfShape, concat({kF8, {kBf16}}));
  // DFT-20: dft_length and axis are inputs (axis was an attribute).
  r.def("DFT", 20, {1, 3, 1, 1, {"input", "dft_length", "axis"}, {"output"}}, no::dft);
  // Gelu-20: approximate "none" (erf) or "tanh".
  r.def("Gelu", 20, unary, no::sameAsInput);
  // GridSample-20: any rank; modes renamed linear / cubic (bilinear / bicubic still read).
  r.def("GridSample", 20, {2, 2, 1, 1, {"X", "grid"}, {"Y"}}, no::gridSample);
  r.def("ImageDecoder", 20, {1, 1, 1, 1, {"encoded_stream"}, {"image"}}, no::imageDecoder);
  r.def("IsInf", 20, unary, no::boolOfInput, concat({kF8, {kBf16}}));
  r.def("IsNaN", 20, unary, no::boolOfInput, concat({kF8, {kBf16}}));
  // ReduceMax-20 / ReduceMin-20: bool inputs too.
  r.def("ReduceMax", 20, {1, 2, 1, 1, {"data", "axes"}, {"reduced"}}, no::reduce, {9});
  r.def("ReduceMin", 20, {1, 2, 1, 1, {"data", "axes"}, {"reduced"}}, no::reduce, {9});
  r.def("RegexFullMatch", 20, unary, no::boolOfInput);
  r.def("StringConcat", 20, {2, 2, 1, 1, {"X", "Y"}, {"Z"}}, no::broadcastBinary);
  r.def("StringSplit", 20, {1, 1, 2, 2, {"X"}, {"Y", "Z"}}, no::stringSplit);

  // ---- opset 21: int4 / uint4; blocked quantization; GroupNormalization per channel ----
  for (const char* op : {"Constant", "Flatten", "Identity", "If", "Loop", "Reshape", "Scan", "Shape", "Size", "Squeeze",
                         "Transpose", "Unsqueeze"})
    r.types(op, 21, {21, 22});
  r.def("Cast", 21, {1, 1, 1, 1, {"input"}, {"output"}}, no::cast, concat({kF8, {kBf16}, kI4}));
  r.def("CastLike", 21, {2, 2, 1, 1, {"input", "target_type"}, {"output"}}, no::castLike, concat({kF8, {kBf16}, kI4}));
  r.def("ConstantOfShape", 21, {1, 1, 1, 1, {"input"}, {"output"}}, no::constantOfShape, concat({kF8, {kBf16}, kI4}));
  // DequantizeLinear-21 / QuantizeLinear-21: block_size (a scale per block along axis); QuantizeLinear's output_dtype.
  r.def("DequantizeLinear", 21, {2, 3, 1, 1, {"x", "x_scale", "x_zero_point"}, {"y"}}, no::dequantizeLinear,
        concat({kF8, kI4, {kBf16}}));
  r.def("QuantizeLinear", 21, {2, 3, 1, 1, {"x", "y_scale", "y_zero_point"}, {"y"}}, no::quantizeLinear,
        concat({kF8, kI4, {kBf16}}));
  r.def("GroupNormalization", 21, {3, 3, 1, 1, {"X", "scale", "bias"}, {"Y"}}, no::sameAsInput);
  r.def("Pad", 21, {2, 4, 1, 1, {"data", "pads", "constant_value", "axes"}, {"output"}}, no::pad, concat({kF8, kI4}));
  r.types("QLinearMatMul", 21, {17, 18, 19, 20, kBf16});

  // ---- opset 22: bfloat16 for the rest of the float ops (types only) ----
  for (const char* op :
       {"Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "AveragePool", "Bernoulli", "Conv", "ConvTranspose", "Cos",
        "Cosh", "DeformConv", "Det", "Dropout", "Elu", "EyeLike", "GRU", "GlobalAveragePool", "GlobalLpPool",
        "GlobalMaxPool", "HardSigmoid", "HardSwish", "InstanceNormalization", "LSTM", "LpNormalization", "LpPool",
        "MaxPool", "MaxRoiPool", "MaxUnpool", "Mish", "Multinomial", "NegativeLogLikelihoodLoss", "RNN", "RandomNormal",
        "RandomNormalLike", "RandomUniform", "RandomUniformLike", "RoiAlign", "Round", "Selu", "Sin", "Sinh",
        "Softplus", "Softsign", "Tan", "ThresholdedRelu", "GridSample"})
    r.types(op, 22, {kBf16});

  // ---- opset 23: float4e2m1; the transformer ops ----
  for (const char* op : {"Constant", "Flatten", "Identity", "If", "Loop", "Reshape", "Scan", "Shape", "Size", "Squeeze",
                         "Transpose", "Unsqueeze"})
    r.types(op, 23, {kFloat4});
  r.def("Cast", 23, {1, 1, 1, 1, {"input"}, {"output"}}, no::cast, concat({kF8, {kBf16}, kI4, {kFloat4}}));
  r.def("CastLike", 23, {2, 2, 1, 1, {"input", "target_type"}, {"output"}}, no::castLike,
        concat({kF8, {kBf16}, kI4, {kFloat4}}));
  r.def("ConstantOfShape", 23, {1, 1, 1, 1, {"input"}, {"output"}}, no::constantOfShape,
        concat({kF8, {kBf16}, kI4, {kFloat4}}));
  r.def("DequantizeLinear", 23, {2, 3, 1, 1, {"x", "x_scale", "x_zero_point"}, {"y"}}, no::dequantizeLinear,
        concat({kF8, kI4, {kBf16, kFloat4}}));
  r.def("QuantizeLinear", 23, {2, 3, 1, 1, {"x", "y_scale", "y_zero_point"}, {"y"}}, no::quantizeLinear,
        concat({kF8, kI4, {kBf16, kFloat4}}));
  r.def("Pad", 23, {2, 4, 1, 1, {"data", "pads", "constant_value", "axes"}, {"output"}}, no::pad,
        concat({kF8, kI4, {kFloat4}}));
  // Attention-23: scaled dot-product attention with GQA, a mask, causal masking, softcap and a KV cache.
  r.def("Attention", 23,
        {3, 6, 1, 4, {"Q", "K", "V", "attn_mask", "past_key", "past_value"},
         {"Y", "present_key", "present_value", "qk_matmul_output"}},
        no::attention);
  // RMSNormalization-23: X / sqrt(mean(X², over [axis, rank)) + epsilon) · scale.
  r.def("RMSNormalization", 23, {2, 2, 1, 1, {"X", "scale"}, {"Y"}}, no::sameAsInput);
  // RotaryEmbedding-23: X [B, S, H·D] or [B, H, S, D], cos/sin caches, optional position_ids.
  r.def("RotaryEmbedding", 23, {3, 4, 1, 1, {"X", "cos_cache", "sin_cache", "position_ids"}, {"Y"}},
        no::sameAsInput);

  // ---- opset 24: float8e8m0 (MX scales); Attention's external KV cache; Swish, TensorScatter ----
  constexpr int kE8M0 = 24;
  for (const char* op : {"Constant", "ConstantOfShape", "DequantizeLinear", "Flatten", "Identity", "If", "Loop", "Pad",
                         "QuantizeLinear", "Reshape", "Scan", "Shape", "Size", "Squeeze", "Transpose", "Unsqueeze"})
    r.types(op, 24, {kE8M0});
  // Cast-24: round_mode for float8e8m0; with saturate, ±Inf becomes the largest finite value for every float8 type.
  r.def("Cast", 24, {1, 1, 1, 1, {"input"}, {"output"}}, no::cast, concat({kF8, {kBf16}, kI4, {kFloat4, kE8M0}}));
  r.def("CastLike", 24, {2, 2, 1, 1, {"input", "target_type"}, {"output"}}, no::castLike,
        concat({kF8, {kBf16}, kI4, {kFloat4, kE8M0}}));
  // Attention-24: nonpad_kv_seqlen (keys at or past it are masked; the causal offset is nonpad - Sq); attn_mask's
  // last axis may be shorter than the keys (the rest masked).
  r.def("Attention", 24,
        {3, 7, 1, 4, {"Q", "K", "V", "attn_mask", "past_key", "past_value", "nonpad_kv_seqlen"},
         {"Y", "present_key", "present_value", "qk_matmul_output"}},
        no::attention);
  r.types("SplitToSequence", 24, {kBf16});
  r.types("TopK", 24, {kBf16});
  r.def("Swish", 24, unary, no::sameAsInput);  // x · sigmoid(alpha · x)
  r.def("TensorScatter", 24, {2, 3, 1, 1, {"past_cache", "update", "write_indices"}, {"present_cache"}},
        no::sameAsInput);

  // ---- opset 25: int2 / uint2 ----
  for (const char* op : {"Cast", "CastLike", "Constant", "ConstantOfShape", "DequantizeLinear", "Flatten", "Identity",
                         "If", "Loop", "Pad", "QuantizeLinear", "Reshape", "Scan", "Shape", "Size", "Squeeze",
                         "Transpose", "Unsqueeze"})
    r.types(op, 25, {25, 26});

  // ---- opset 26 ----
  r.def("BitCast", 26, {1, 1, 1, 1, {"input"}, {"output"}}, no::bitCast);  // same bits, another type of that width
  r.def("CumProd", 26, {2, 2, 1, 1, {"x", "axis"}, {"y"}}, no::sameAsInput);  // CumSum's contract, products
}

}  // namespace kiln
