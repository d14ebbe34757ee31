#include "kernels/sgemm_tiles.h"

#include <algorithm>
#include <memory>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/transdata_blocked.h"
#include "util/parallel_for.h"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace kiln::kernels {

#if defined(__AVX512F__)
namespace {

// Tiles: up to 12 rows of A by 32 columns of B (24 accumulators of 16 lanes, two FMAs a cycle with room for the
// loads), over a depth block of kDepth (the 32 KiB sliver of B stays in L1 while every row tile passes over it; the
// block of A, rows × kDepth, stays in L2 while the panels pass). Measured on the convolution shapes of Inception and
// ResNet: as fast as OpenBLAS's kernel without its per-call packing.
constexpr int kRows = 12;
constexpr int64_t kPackedLanes = 16;  // a packed tile's rows per depth step (12 real, the rest zero)
constexpr int kPanel = kSliverWidth;
constexpr int64_t kDepth = 256;
// Up to this many column panels, the slivers of a depth block are gathered first and the row tiles go outside.
constexpr size_t kFewPanels = 8;
// Beyond this many panels A is packed first (packA): its cost, a quarter cycle per element, is then a few percent.
constexpr size_t kPackFromPanels = 8;

// One tile: R rows (the last `rows` of them real: a shorter tile repeats its last row and stores none of the
// copies), NV vectors of 16 columns (`width` of them real, masked). `first`: the depth block starting at p = 0,
// whose chains start from zero; later blocks continue the chains from C, which holds them unrounded (fp32 is the
// accumulator's type), so the result is one chain whatever the blocking.
// Packed: A's rows come packed (packA: element p of the tile's row r at a[p·16 + r]), one stream instead of R rows
// whose pointers did not fit the registers (their reloads took the FMA port); else row r at a + r·lda.
template <int R, int NV, bool Packed>
[[gnu::noinline]] void tile(bool first, int64_t depth, const float* a, int64_t lda, int rows, const float* b,
                            int64_t ldb, float* c, int64_t ldc, int width) {
  __mmask16 mask[NV];
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v) {
    const int rest = width - v * 16;
    mask[v] = rest >= 16 ? __mmask16(0xffff) : rest <= 0 ? __mmask16(0) : __mmask16((1u << rest) - 1);
  }
  const float* row[R];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) row[r] = Packed ? a : a + static_cast<ptrdiff_t>(std::min(r, rows - 1)) * lda;
  __m512 acc[R][NV];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      acc[r][v] = _mm512_maskz_loadu_ps(first || r >= rows ? __mmask16(0) : mask[v], c + r * ldc + v * 16);
  for (int64_t p = 0; p < depth; ++p) {
    _mm_prefetch(reinterpret_cast<const char*>(b + (p + 8) * ldb), _MM_HINT_T0);
    if (NV > 1) _mm_prefetch(reinterpret_cast<const char*>(b + (p + 8) * ldb + 16), _MM_HINT_T0);
    __m512 bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) bv[v] = _mm512_maskz_loadu_ps(mask[v], b + p * ldb + v * 16);
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      const __m512 av = _mm512_set1_ps(Packed ? a[p * kPackedLanes + r] : row[r][p]);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_fmadd_ps(av, bv[v], acc[r][v]);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) _mm512_mask_storeu_ps(c + r * ldc + v * 16, r < rows ? mask[v] : __mmask16(0), acc[r][v]);
}

template <int NV, bool Packed>
void tileRows(bool first, int64_t depth, const float* a, int64_t lda, int rows, const float* b, int64_t ldb, float* c,
              int64_t ldc, int width) {
  if (rows > 8)
    tile<12, NV, Packed>(first, depth, a, lda, rows, b, ldb, c, ldc, width);
  else if (rows > 4)
    tile<8, NV, Packed>(first, depth, a, lda, rows, b, ldb, c, ldc, width);
  else
    tile<4, NV, Packed>(first, depth, a, lda, rows, b, ldb, c, ldc, width);
}

// B's rows [p0, p0 + depth), columns [j0, j0 + width) into a 32-wide sliver, zeros beyond `width`.
void packSliver(const float* b, int64_t ldb, int64_t p0, int64_t depth, int64_t j0, int width, float* sliver) {
  const __mmask16 m0 = width >= 16 ? __mmask16(0xffff) : __mmask16((1u << width) - 1);
  const __mmask16 m1 = width >= 32 ? __mmask16(0xffff) : width <= 16 ? __mmask16(0) : __mmask16((1u << (width - 16)) - 1);
  for (int64_t p = 0; p < depth; ++p) {
    const float* src = b + (p0 + p) * ldb + j0;
    _mm512_store_ps(sliver + p * kPanel, _mm512_maskz_loadu_ps(m0, src));
    _mm512_store_ps(sliver + p * kPanel + 16, _mm512_maskz_loadu_ps(m1, src + 16));
  }
}

// C's tile `tile` (rows) by panel `panel` (columns) over depth [p0, p0 + depth); B's rows of that panel at b, `ldb`
// apart (a sliver, or B itself). `packed`: A as packA wrote it (k deep), else null and A at a, lda.
void multiplyTile(int64_t m, int64_t n, const float* a, int64_t lda, const float* packed, int64_t k, float* c,
                  int64_t ldc, int64_t p0, int64_t depth, size_t tile, size_t panel, const float* b, int64_t ldb) {
  const int64_t i0 = static_cast<int64_t>(tile) * kRows, j0 = static_cast<int64_t>(panel) * kPanel;
  const int rows = static_cast<int>(std::min<int64_t>(kRows, m - i0));
  const int width = static_cast<int>(std::min<int64_t>(kPanel, n - j0));
  float* ci = c + i0 * ldc + j0;
  if (packed) {
    const float* ai = packed + (static_cast<int64_t>(tile) * k + p0) * kPackedLanes;
    if (width > 16)
      tileRows<2, true>(p0 == 0, depth, ai, 0, rows, b, ldb, ci, ldc, width);
    else
      tileRows<1, true>(p0 == 0, depth, ai, 0, rows, b, ldb, ci, ldc, width);
    return;
  }
  const float* ai = a + i0 * lda + p0;
  if (width > 16)
    tileRows<2, false>(p0 == 0, depth, ai, lda, rows, b, ldb, ci, ldc, width);
  else
    tileRows<1, false>(p0 == 0, depth, ai, lda, rows, b, ldb, ci, ldc, width);
}

// A's rows, a tile of 12 at a time, as [tile][p][16] (lanes beyond the tile's rows zero): one transpose of 16 × 16
// elements at a time (kiln/transdata_blocked.h), worth it when every tile of A passes over many panels.
std::unique_ptr<float[]> packA(int64_t m, int64_t k, const float* a, int64_t lda) {
  const int64_t tiles = (m + kRows - 1) / kRows;
  auto packed = std::make_unique_for_overwrite<float[]>(static_cast<size_t>(tiles * k * kPackedLanes));
  for (int64_t t = 0; t < tiles; ++t)
    rowsToBlocks(a + t * kRows * lda, lda, k, std::min<int64_t>(kRows, m - t * kRows), packed.get() + t * k * kPackedLanes);
  return packed;
}

// Up to this many rows of A (two row tiles), B is read where it lies: a sliver copy would serve too few tiles to
// repay itself (MobileNetV2's 16- and 24-channel pointwise convolutions, a BERT of few tokens).
constexpr int64_t kReadBInPlaceUpTo = 2 * kRows;

}  // namespace

bool tiledSgemmAvailable() { return true; }

void tiledSgemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const SliverSource& source, float* c,
                int64_t ldc) {
  const auto panels = static_cast<size_t>((n + kPanel - 1) / kPanel);
  const auto tiles = static_cast<size_t>((m + kRows - 1) / kRows);
  // Panel by panel (below), every tile of A passes over every panel: with enough panels A is packed once for them.
  const std::unique_ptr<float[]> packed = panels > kPackFromPanels ? packA(m, k, a, lda) : nullptr;
  const auto multiply = [&](int64_t p0, int64_t depth, size_t tile, size_t panel, const float* sliver) {
    multiplyTile(m, n, a, lda, packed.get(), k, c, ldc, p0, depth, tile, panel, sliver, kPanel);
  };
  // A few panels (a convolution over a 7×7 or 14×14 plane, a MatMul of few rows): all of a depth block's slivers
  // are gathered first and each row tile of A passes over them while it is in L1; with the panel-first order a
  // large A (ResNet-50's 2048 × 512 weights) came from L3 once per panel.
  if (panels <= kFewPanels) {
    // Uninitialised (the source writes every column a tile reads): zeroing it cost a small MatMul more than its
    // products.
    const auto room = std::make_unique_for_overwrite<float[]>(panels * kDepth * kPanel + 16);
    float* slivers = room.get() + (16 - reinterpret_cast<uintptr_t>(room.get()) / sizeof(float) % 16) % 16;
    for (int64_t p0 = 0; p0 < k; p0 += kDepth) {
      const int64_t depth = std::min(kDepth, k - p0);
      for (size_t panel = 0; panel < panels; ++panel) {
        const int64_t j0 = static_cast<int64_t>(panel) * kPanel;
        source(p0, depth, j0, static_cast<int>(std::min<int64_t>(kPanel, n - j0)), slivers + panel * kDepth * kPanel);
      }
      const auto tileFlops = static_cast<size_t>(2 * kRows * depth * kPanel) * panels;
      parallelFor(tiles, std::max<size_t>(1, (size_t{1} << 20) / tileFlops), 1, [&](size_t first, size_t last) {
        for (size_t tile = first; tile < last; ++tile)
          for (size_t panel = 0; panel < panels; ++panel)
            multiply(p0, depth, tile, panel, slivers + panel * kDepth * kPanel);
      });
    }
    return;
  }
  for (int64_t p0 = 0; p0 < k; p0 += kDepth) {
    const int64_t depth = std::min(kDepth, k - p0);
    // Pieces of at least ~1 MFLOP: smaller ones cost more to hand to a thread than they take.
    const auto panelFlops = static_cast<size_t>(2 * m * depth * kPanel);
    parallelFor(panels, std::max<size_t>(1, (size_t{1} << 20) / panelFlops), 1, [&](size_t first, size_t last) {
      alignas(64) static thread_local float sliver[kDepth * kPanel];  // off the stack: 32 KiB
      for (size_t panel = first; panel < last; ++panel) {
        const int64_t j0 = static_cast<int64_t>(panel) * kPanel;
        source(p0, depth, j0, static_cast<int>(std::min<int64_t>(kPanel, n - j0)), sliver);
        for (size_t tile = 0; tile < tiles; ++tile) multiply(p0, depth, tile, panel, sliver);
      }
    });
  }
}

void tiledSgemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                int64_t ldc) {
  if (m <= kReadBInPlaceUpTo) {
    const auto panels = static_cast<size_t>((n + kPanel - 1) / kPanel);
    const auto tiles = static_cast<size_t>((m + kRows - 1) / kRows);
    for (int64_t p0 = 0; p0 < k; p0 += kDepth) {
      const int64_t depth = std::min(kDepth, k - p0);
      const auto panelFlops = static_cast<size_t>(2 * m * depth * kPanel);
      parallelFor(panels, std::max<size_t>(1, (size_t{1} << 20) / panelFlops), 1, [&](size_t first, size_t last) {
        for (size_t panel = first; panel < last; ++panel)
          for (size_t tile = 0; tile < tiles; ++tile)
            multiplyTile(m, n, a, lda, nullptr, k, c, ldc, p0, depth, tile, panel,
                         b + p0 * ldb + static_cast<int64_t>(panel) * kPanel, ldb);
      });
    }
    return;
  }
  tiledSgemm(m, n, k, a, lda, [&](int64_t p0, int64_t depth, int64_t j0, int width, float* sliver) {
    packSliver(b, ldb, p0, depth, j0, width, sliver);
  }, c, ldc);
}

#else

bool tiledSgemmAvailable() { return false; }

// The same chains, one element at a time (callers take OpenBLAS on such builds; this keeps the functions whole).
void tiledSgemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const SliverSource& source, float* c,
                int64_t ldc) {
  std::vector<float> b(static_cast<size_t>(k * kSliverWidth));
  for (int64_t j0 = 0; j0 < n; j0 += kSliverWidth) {
    const int width = static_cast<int>(std::min<int64_t>(kSliverWidth, n - j0));
    source(0, k, j0, width, b.data());
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < width; ++j) {
        float acc = 0.0f;
        for (int64_t p = 0; p < k; ++p) acc = std::fma(a[i * lda + p], b[static_cast<size_t>(p * kSliverWidth + j)], acc);
        c[i * ldc + j0 + j] = acc;
      }
    }
  }
}

void tiledSgemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                int64_t ldc) {
  tiledSgemm(m, n, k, a, lda, [&](int64_t p0, int64_t depth, int64_t j0, int width, float* sliver) {
    for (int64_t p = 0; p < depth; ++p)
      std::copy_n(b + (p0 + p) * ldb + j0, width, sliver + p * kSliverWidth);
  }, c, ldc);
}

#endif

}  // namespace kiln::kernels
