#pragma once
// What AddLayerNormFusion and AddRmsNormFusion share: the residual Add feeding a norm, fused into
// kiln:AddLayerNorm / kiln:AddRmsNorm (A, B, params...) -> Y [, Sum]. The sum stays available as the second output
// when something else reads it (the residual stream of pre-norm transformers) rather than refusing the fusion.
#include <string>

namespace kiln {

class Node;

// `norm` is a kiln:LayerNorm, kiln:RmsNorm or ONNX LayerNormalization whose X is Add(A, B). B may broadcast into A
// (A has the sum's shape); the norm's parameters must be constants (so no path leads from the sum back into them);
// the norm's optional statistics outputs must be unused. Returns the fused node or null (graph untouched).
Node* fuseAddNorm(Node& norm, const std::string& fusedOpType, const std::string& rule);

}  // namespace kiln
