#pragma once
// Where a plan hands arena bytes from one block to another, and whether the streams are ordered for it.
//
// Lifetimes are intervals over one execution order, but streams run concurrently: a block may go to a new tensor
// at step s only when every reader of the bytes' previous holder has finished before s starts. On s's own stream
// the stream order says so; a reader on another stream needs an event path (HappensBefore). Only the latest holder
// of each byte matters: its writer was itself ordered after the holder before it.
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "memory/lifetimes.h"

namespace kiln {
class HappensBefore;
}

namespace kiln::memory {

struct UnorderedReuse {
  int block = -1;        // the block taking the bytes over (written at `step`)
  int64_t step = 0;
  int previous = -1;     // the block that held them
  int64_t reader = 0;    // its last reader on another stream, not known to have finished before `step`
};

// Walks `hb` (fresh, not yet advanced) through every step. At each step that writes a block taking over bytes of
// earlier blocks (from `offsets`, one per block of `life`; a block without one is skipped), calls `unordered` for
// every last reader on another stream that the step does not know of. The callback may make the step wait for the
// reader (hb.wait): later checks see it.
void forEachUnorderedReuse(const Lifetimes& life, const std::vector<std::optional<int64_t>>& offsets,
                           HappensBefore& hb, const std::function<void(const UnorderedReuse&)>& unordered);

// The blocks of `life` (aligned) stretched so that no reuse of them needs a new event: each lasts until every
// stream that runs on afterwards has synchronised with all of its readers. `hb` has run to the end. A plan over
// these is ordered by the existing events (forEachUnorderedReuse finds nothing); with one stream they are the
// blocks themselves.
std::vector<Buffer> streamOrderedBlocks(const Lifetimes& life, const HappensBefore& hb);

// The nodes of `g` that are steps of `life` (its lifetimes), in order, as HappensBefore takes them.
std::vector<Node*> stepNodes(const Graph& g, const Lifetimes& life);

// The reuses of a compiled graph's plan (its mem.out offsets) that no event orders: empty when it is safe to run.
std::vector<UnorderedReuse> unorderedReuses(const Graph& g);

}  // namespace kiln::memory
