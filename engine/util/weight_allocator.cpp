#include "util/weight_allocator.h"

#include <malloc.h>

#include <cstdlib>

namespace kiln {

void tuneAllocatorForWeights() {
  if (std::getenv("GLIBC_TUNABLES")) return;
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
}

}  // namespace kiln
