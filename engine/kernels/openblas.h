#pragma once
// OpenBLAS, loaded on the first float GEMM instead of at start-up. Linked, it cost every kiln command its loading
// and relocation, and its worker threads (one per core) spin on sched_yield for ~0.1 s after the library starts
// before they sleep: on a 2-core machine a core taken from the compile and the history writer whether a GEMM ever
// ran or not. Loaded here, only work that multiplies matrices pays for it.
namespace kiln::kernels {

// Loads OpenBLAS now (where it would be used): the emulator calls it before it starts timing a run, so that the
// run's time is its work, not the library's loading and relocation (~10 ms; ONNX Runtime's are paid at start-up).
void loadBlas();

// Row-major C = alpha·op(A)·op(B) + beta·C through OpenBLAS. False, and nothing done, when the library cannot be
// loaded, or under an address-space limit (see openblas.cpp): the caller runs its own loop.
bool blasSgemm(bool transA, bool transB, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
               int ldb, float beta, float* c, int ldc);
bool blasDgemm(bool transA, bool transB, int m, int n, int k, double alpha, const double* a, int lda,
               const double* b, int ldb, double beta, double* c, int ldc);

}  // namespace kiln::kernels
