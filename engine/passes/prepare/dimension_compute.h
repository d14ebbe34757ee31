#pragma once
// DimensionCompute (prepare stage; GE's DimensionComputePass): Shape and Size of a value whose dims are known at
// compile time become constants even though the tensor itself is not constant, so the shape arithmetic that
// exporters emit (Shape -> Gather -> Unsqueeze -> Concat -> Reshape) can then be folded by ConstantFolding.
// Shape's start/end (opset 15) are honoured: only the selected dims need to be static.
// Counter: shapes_computed.
#include <memory>

#include "passes/pass.h"

namespace kiln {

std::unique_ptr<Pass> makeDimensionComputePass();

}  // namespace kiln
