#pragma once
// Shape inference for the ops only a kernel knows: ONNX Runtime's com.microsoft ops (Attention, SkipLayerNormalization,
// EmbedLayerNormalization, FastGelu, RotaryEmbedding, MultiHeadAttention...) and the old experimental ops
// (ImageScaler, Crop, Affine...) have no schema in libonnx, so without this their outputs keep whatever the file
// declared — often nothing, and then everything downstream is of unknown size and out of the memory plan. Once the
// inputs are static, running the kernel on placeholder inputs (zeros; constants as they are) gives the exact
// output types, the same kernels the emulator runs. Bounded: inputs and outputs above `maxBytes` are not probed.
#include <cstdint>

namespace kiln {

class Node;

// Sets n's output types from a kernel run; false (nothing changed) when an input is not a static tensor, the op has
// no kernel, the data would pass maxBytes, or the kernel refuses the placeholders.
bool probeOutputTypes(Node& n, int64_t opset, int64_t maxBytes = int64_t{64} << 20);

}  // namespace kiln
