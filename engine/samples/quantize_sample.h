#pragma once
// Int8 forms of the float samples, written the way ONNX Runtime's quantization tool writes them, so the compiler
// and the precision gate are tried on the quantized models users bring:
//  - dynamic (quantize_dynamic): each Conv and MatMul with constant weights becomes DynamicQuantizeLinear on its
//    activation (uint8, scale and zero point computed at run time) → ConvInteger / MatMulInteger with int8 weights
//    quantized per tensor, symmetric → Cast to float → Mul by activation scale × weight scale (→ Add the bias).
//  - qdq (quantize_static, QDQ format): the activation entering each Conv and MatMul goes through
//    QuantizeLinear → DequantizeLinear with an int8 scale calibrated on seeded random inputs (max |x| / 127), the
//    weights are int8 initializers (per output channel for Conv) read through DequantizeLinear.
#include <string>

#include "ir/model.h"

namespace kiln::samples {

enum class Quantization { None, Dynamic, Qdq };

// "dynamic" / "qdq" / "" (none); throws std::invalid_argument for anything else.
Quantization parseQuantization(const std::string& name);

// Rewrites `model` in place (its shapes inferred). Returns the number of Conv/MatMul nodes quantized. Qdq runs
// the model once on the reference kernels to calibrate; throws std::runtime_error when that run fails.
int quantizeModel(Model& model, Quantization q);

}  // namespace kiln::samples
