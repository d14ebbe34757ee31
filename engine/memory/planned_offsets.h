#pragma once
// The plan a scheduled graph carries: MemoryAssignment writes each output's arena offset into its producer's
// "mem.out" annotation (an .om's reader writes the file's offsets the same way). Read back per arena block.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "memory/lifetimes.h"

namespace kiln::memory {

// Item `slot` of a comma-separated "mem.out" ("1024,output,-"): an offset only when it is a plain decimal that fits.
std::optional<int64_t> offsetInAnnotation(const std::string& text, size_t slot);

// One entry per block of `life`: the offset recorded for its first tensor that has one (they agree when the plan
// came from MemoryAssignment), or nothing when none of its tensors was given an offset.
std::vector<std::optional<int64_t>> plannedBlockOffsets(const Lifetimes& life);

}  // namespace kiln::memory
