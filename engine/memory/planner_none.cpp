// No reuse at all: the reference point that shows what the other planners save.
#include "memory/planners.h"

namespace kiln::memory::detail {

Placement planNone(const std::vector<Buffer>& buffers, int64_t alignment) {
  Placement p;
  p.offset.reserve(buffers.size());
  int64_t next = 0;
  for (const Buffer& b : buffers) {
    p.offset.push_back(next);
    p.arena = next + b.size;
    next = alignUp(p.arena, alignment);
  }
  return p;
}

}  // namespace kiln::memory::detail
