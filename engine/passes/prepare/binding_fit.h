#pragma once
// The shape binding every command uses, with the policy's sequence extents fitted to what the model can take.
//
// The dim policy's sequence (128 by default) is a guess; a model's own tables may be shorter: a position embedding
// of 77 rows (CLIP's text encoder), a causal-mask buffer of n_positions × n_positions (GPT-2 exports slice it by
// past + sequence), a fixed-length position_ids buffer (BERT's 512). Bound past such a table, shape inference
// fails on the ops that read it and everything downstream stays unsized. So when inference fails at the policy's
// extents and fails less with the sequence roles at 1, the sequence extents the policy chose (sequence and
// past_sequence; a total follows them) are lowered to the largest value at which inference fails no more than at 1,
// found by bisection, and the symbol's source says so ("dim_policy: past_sequence, fitted: 128 fails inference").
// Extents the user gave (input_shape, dim_values, input data) are never changed: they fail with the hint naming them.
//
// Each probe binds the graph's value types, runs inference and puts every type back as it was (inference changes
// value types only), so the graph is left as it came: the model is taken const for that reason, and must not be read
// by another thread during the call. Cost: one inference when the policy's extents fit; about log2(extent) + 2 when
// they do not.
#include "ir/shape_binding.h"

namespace kiln {

struct Model;

// resolveShapeBinding (throws std::invalid_argument the same way), then the fit above.
ShapeBinding resolveFittedBinding(const Model& model, const BindingRequest& request);

// Whether the extents a request fixes (a sweep's point, a gear, a user's dim_values) fit the model: the nodes whose
// inference or shape arithmetic fails at them, against the same request with its dim_values and the policy's
// sequence roles at 1. A point that fails more than that is past one of the model's tables.
struct BindingFit {
  size_t failures = 0, baseline = 0;
  bool fits() const { return failures <= baseline; }
  // "shape inference or indexing fails on 3 nodes more than at extent 1 (a table of the model is shorter)"
  std::string problem() const;
};
BindingFit checkBindingFit(const Model& model, const BindingRequest& request);

}  // namespace kiln
