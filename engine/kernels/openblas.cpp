#include "kernels/openblas.h"

#include <cblas.h>
#include <dlfcn.h>

#include <initializer_list>

#include "util/process_limits.h"

namespace kiln::kernels {

namespace {

struct OpenBlas {
  decltype(&cblas_sgemm) sgemm = nullptr;
  decltype(&cblas_dgemm) dgemm = nullptr;
};

// Under an address-space limit (ulimit -v, RLIMIT_AS) OpenBLAS is not used: when it cannot start its worker threads
// it kills the process (SIGINT), and when it cannot get its buffer it retries forever. Both happen before memory
// really runs out; the plain kernels then run instead, and running out ends in Kiln's own clear message.
// Loaded once, by whichever thread multiplies first (a function-local static is initialised exactly once). The
// handle is never closed: the library's threads live until the process ends.
const OpenBlas& openBlas() {
  static const OpenBlas lib = [] {
    OpenBlas b;
    if (addressSpaceLimited()) return b;
    for (const char* name : {"libopenblas.so.0", "libopenblas.so"}) {
      void* h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (!h) continue;
      b.sgemm = reinterpret_cast<decltype(&cblas_sgemm)>(dlsym(h, "cblas_sgemm"));
      b.dgemm = reinterpret_cast<decltype(&cblas_dgemm)>(dlsym(h, "cblas_dgemm"));
      if (b.sgemm && b.dgemm) break;
      b = OpenBlas{};
    }
    return b;
  }();
  return lib;
}

CBLAS_TRANSPOSE op(bool t) { return t ? CblasTrans : CblasNoTrans; }

}  // namespace

bool blasSgemm(bool transA, bool transB, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
               int ldb, float beta, float* c, int ldc) {
  const OpenBlas& lib = openBlas();
  if (!lib.sgemm) return false;
  lib.sgemm(CblasRowMajor, op(transA), op(transB), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  return true;
}

bool blasDgemm(bool transA, bool transB, int m, int n, int k, double alpha, const double* a, int lda,
               const double* b, int ldb, double beta, double* c, int ldc) {
  const OpenBlas& lib = openBlas();
  if (!lib.dgemm) return false;
  lib.dgemm(CblasRowMajor, op(transA), op(transB), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  return true;
}

}  // namespace kiln::kernels
