#pragma once
// Kiln's own single-precision GEMM for the plain row-major product C = A·B (no transposes, alpha 1, beta 0), the
// shape every convolution (im2col or pointwise) and most MatMuls take. OpenBLAS packs both operands into its own
// layout on every call (a sixth of an Inception run went to those copies); this kernel reads A's rows where they
// are and copies only a 32-column sliver of B at a time, which every row tile of A then reuses from L1.
//
// Each output is one chain of fused multiply-adds over p = 0 .. k-1 in order, starting from zero: its bits depend
// on its row of A and column of B only, not on m, n, the tiling or the thread count. Kernels that cut a product into
// bands (the blocked convolutions) get the same bits as the uncut product.
#include <cstdint>
#include <functional>

namespace kiln::kernels {

// False when this build has no kernel (it needs AVX-512; KILN_NATIVE_ARCH builds for the machine's CPU): callers
// use OpenBLAS then.
bool tiledSgemmAvailable();

// C[i·ldc + j] = Σ_p A[i·lda + p] · B[p·ldb + j] for i < m, j < n. Runs on KILN_THREADS' cores (column panels
// split between them). m, n, k > 0; the leading dimensions at least the rows' extents.
void tiledSgemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                int64_t ldc);

// The same product with B given by a function instead of a matrix: source(p0, depth, j0, width, sliver) writes B's
// rows [p0, p0 + depth), columns [j0, j0 + width) into sliver (row p - p0 at sliver + (p - p0)·kSliverWidth; columns
// beyond width are not read). A convolution gathers its im2col columns straight from the image this way, without an
// im2col matrix. Called from several threads at once (each with its own sliver).
constexpr int kSliverWidth = 32;
using SliverSource = std::function<void(int64_t p0, int64_t depth, int64_t j0, int width, float* sliver)>;
void tiledSgemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const SliverSource& source, float* c,
                int64_t ldc);

}  // namespace kiln::kernels
