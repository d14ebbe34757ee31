#pragma once
// Limits the process runs under, for code that must behave differently within them.
#include <sys/resource.h>

namespace kiln {

// True under an address-space limit (ulimit -v, RLIMIT_AS). Within one, memory runs out long before the machine's
// does, and what reserves address space up front (a second thread's malloc arena, 64 MiB; OpenBLAS's buffers) fails
// first: such work stays on the calling thread or is not done.
inline bool addressSpaceLimited() {
  rlimit as{};
  return getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY;
}

}  // namespace kiln
