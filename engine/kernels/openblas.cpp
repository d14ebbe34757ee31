#include "kernels/openblas.h"

#include <cblas.h>
#include <dlfcn.h>

#include <cstdlib>
#include <initializer_list>
#include <string>
#include <vector>

#include "util/parallel_for.h"
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
// Debian's OpenBLAS picks its kernels by the CPU's family and model numbers, and on a CPU it does not know by number
// (a virtual machine's "Intel Xeon Processor", a newer part) it falls back to Prescott: SSE3 kernels, 4 to 8 times
// slower than the AVX2 or AVX-512 ones the CPU runs (measured: the resnet50 sample's convolutions spent 44% of a run
// in dgemm_kernel_PRESCOTT). Unless the user chose a core (OPENBLAS_CORETYPE), name the one the CPU's features
// allow before the library initialises. Set once, while the library is loaded, before any thread asks for it.
void chooseOpenBlasCore() {
  // Its threads: as many as Kiln's own (KILN_THREADS caps both). More would spin on sched_yield beside the work:
  // with KILN_THREADS=1 on two cores, a quarter of a ResNet-50 run's samples were OpenBLAS's idle threads yielding.
  if (!std::getenv("OPENBLAS_NUM_THREADS"))
    setenv("OPENBLAS_NUM_THREADS", std::to_string(parallelThreads()).c_str(), 0);
  if (std::getenv("OPENBLAS_CORETYPE")) return;
  __builtin_cpu_init();
  const char* core = nullptr;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl"))
    core = "SkylakeX";
  else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    core = "Haswell";
  if (core) setenv("OPENBLAS_CORETYPE", core, 0);
}

// A few small products through each path a float run takes (the small-matrix kernels for each transposition, the
// packed kernel and its copy routines): the library's code is paged in and its buffers set up here, at loading,
// rather than inside the first run's first GEMMs (ONNX Runtime pays the same at session creation).
void warmUp(const OpenBlas& b) {
  std::vector<float> a(96 * 96, 1.0f), x(96 * 96, 1.0f), c(96 * 96);
  for (const bool ta : {false, true})
    for (const bool tb : {false, true}) b.sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
                                                tb ? CblasTrans : CblasNoTrans, 8, 8, 8, 1.0f, a.data(), 8, x.data(), 8,
                                                0.0f, c.data(), 8);
  b.sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 96, 96, 96, 1.0f, a.data(), 96, x.data(), 96, 0.0f, c.data(), 96);
}

const OpenBlas& openBlas() {
  static const OpenBlas lib = [] {
    OpenBlas b;
    if (addressSpaceLimited()) return b;
    chooseOpenBlasCore();
    for (const char* name : {"libopenblas.so.0", "libopenblas.so"}) {
      void* h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (!h) continue;
      b.sgemm = reinterpret_cast<decltype(&cblas_sgemm)>(dlsym(h, "cblas_sgemm"));
      b.dgemm = reinterpret_cast<decltype(&cblas_dgemm)>(dlsym(h, "cblas_dgemm"));
      if (b.sgemm && b.dgemm) break;
      b = OpenBlas{};
    }
    if (b.sgemm) warmUp(b);
    return b;
  }();
  return lib;
}

CBLAS_TRANSPOSE op(bool t) { return t ? CblasTrans : CblasNoTrans; }

}  // namespace

void loadBlas() { openBlas(); }

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
