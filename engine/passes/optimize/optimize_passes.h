#pragma once
// Stage 2 passes after graph fusion, in GE's order: precision (RefineRunningPrecision, CastRemoval), then formats
// (RefineRunningFormat, TransDataSymmetryElimination, SameTransDataBreadthFusion, TransDataCastFusion).
#include <cstdint>
#include <memory>

#include "passes/pass.h"

namespace kiln {

std::unique_ptr<Pass> makeRefineRunningPrecisionPass();
std::unique_ptr<Pass> makeCastRemovalPass();
std::unique_ptr<Pass> makeRefineRunningFormatPass();
std::unique_ptr<Pass> makeTransDataSymmetryEliminationPass();
std::unique_ptr<Pass> makeSameTransDataBreadthFusionPass();
std::unique_ptr<Pass> makeTransDataCastFusionPass();

// Layout conversions left in a model (kiln:TransData and fused kiln:TransDataCast nodes, subgraphs included): what
// `kiln compile --json` reports as `transdata`.
int64_t countTransData(const Model& m);

}  // namespace kiln
