#pragma once
// Stage 1 (prepare) passes, one per file, named after the pass. Constant folding, dimension compute and
// BatchNorm folding have their own headers (constant_folding.h, dimension_compute.h, batchnorm_fold.h).
#include <memory>

#include "passes/pass.h"

namespace kiln {

std::unique_ptr<Pass> makeInputShapeBindingPass();       // input_shape option; symbolic dims bound everywhere
std::unique_ptr<Pass> makeInferShapePass();              // type/shape inference over the whole model
std::unique_ptr<Pass> makeDeadCodeEliminationPass();     // GE's PrunePass: nodes that reach no output
std::unique_ptr<Pass> makeNoOpRemovalPass();             // Identity, inference Dropout, same-shape Reshape, ...
std::unique_ptr<Pass> makeCommonSubexpressionEliminationPass();
std::unique_ptr<Pass> makeAlgebraicSimplificationPass(); // x*1, x+0, double Transpose, Reshape chains
std::unique_ptr<Pass> makeSwitchDeadBranchEliminationPass();  // If with a constant condition -> its branch
std::unique_ptr<Pass> makeValidityCheckPass();           // tags each op with its engine, reports unsupported

}  // namespace kiln
