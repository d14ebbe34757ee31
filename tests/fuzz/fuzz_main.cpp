// The libFuzzer entry point of one target: the executable kiln_fuzz_<name> is built with
// -DKILN_FUZZ_TARGET="<name>" in the `fuzz` preset (clang, -fsanitize=fuzzer,address,undefined).
#include <cstdlib>
#include <cstdio>

#include "fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const kiln::fuzz::Target* target = [] {
    const kiln::fuzz::Target* t = kiln::fuzz::findTarget(KILN_FUZZ_TARGET);
    if (!t) {
      std::fprintf(stderr, "no fuzz target '%s'\n", KILN_FUZZ_TARGET);
      std::abort();
    }
    return t;
  }();
  target->run(data, size);
  return 0;
}
