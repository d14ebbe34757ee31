#pragma once
// Expands a node whose op is defined by a function body into a graph of simpler ops, so the emulator can run ops it
// has no kernel for: libonnx's function ops (static bodies such as Celu or MeanVarianceNormalization, and bodies
// built for the node's input types such as LayerNormalization or SoftmaxCrossEntropyLoss) and the model's local
// functions. Attribute references in the body (ref_attr_name) take the node's attribute, else the schema default.
#include "emulator/reference_executor.h"
#include "ir/model.h"

namespace kiln {

// The expander keeps what it built (one graph per node) for as long as it lives; `model` supplies the opsets and
// local functions and must outlive it.
FunctionExpander makeFunctionExpander(const Model& model);

}  // namespace kiln
