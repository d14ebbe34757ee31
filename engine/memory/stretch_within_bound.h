#pragma once
// Between the two ways of reusing memory across streams (memory/reuse_handoffs.h): each block stretched until every
// stream knows its readers costs no event but may raise the peak; each block to its last reader needs an event per
// hand-over across streams. This takes the stretch wherever it is free: a block keeps its stretched lifetime when
// the live bytes stay within the unstretched lower bound all along the extension. A plan of the result can still
// reach that bound, and the stretched blocks' reuses need no event.
#include <vector>

#include "memory/memory_plan.h"

namespace kiln::memory {

// `blocks` and `stretched` describe the same blocks (same order, same lower and size; stretched upper >= upper).
// Smaller blocks are tried first: more of them fit under the bound, and each saves as many events as a big one.
std::vector<Buffer> stretchedWithinBound(const std::vector<Buffer>& blocks, const std::vector<Buffer>& stretched);

}  // namespace kiln::memory
