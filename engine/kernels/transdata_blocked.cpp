#include "kernels/transdata_blocked.h"

#include <bit>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "util/parallel_for.h"

namespace kiln {
namespace {

bool isPlain(Format f) { return f == Format::ND || f == Format::NCHW; }

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Pieces of a parallel loop worth at least this many elements each (smaller loops run on the caller alone).
constexpr size_t kPieceElements = size_t{1} << 16;
size_t piecesOf(int64_t elementsPerItem) {
  return std::max<size_t>(1, kPieceElements / static_cast<size_t>(std::max<int64_t>(1, elementsPerItem)));
}

// Elements of a plane handled per tile: the tile's C0 lanes (at most 16 × 64 × 8 bytes) stay in L1 while the C0
// plain rows are read or written in order.
constexpr int64_t kPlaneTile = 64;

#if defined(__AVX512F__)
// GCC 12's unpack intrinsics start from _mm512_undefined_epi32(), which it then reports as used uninitialised.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// A 16 × 16 block of 32-bit elements transposed in registers: dst row r, column c = src row c, column r. Rows of 4
// interleave into columns of 4 within each 128-bit lane (unpack 32, then 64), then the lanes are exchanged twice.
// Only the first srcRows rows and srcCols columns are read (the rest are zeros), and the first dstRows rows and
// dstCols columns written: a block's last C0 group may hold fewer than 16 channels, and a run of positions may end
// within the last 16 (masked loads and stores: no element outside the block is touched).
// `add` (16 floats, or null): added as floats to every row written (a convolution's bias per channel, on its way into
// the blocks).
void transpose16x16(const uint32_t* src, int64_t srcStride, int64_t srcRows, int64_t srcCols, uint32_t* dst,
                    int64_t dstStride, int64_t dstRows, int64_t dstCols, const float* add = nullptr) {
  const auto maskOf = [](int64_t cols) { return static_cast<__mmask16>(cols >= 16 ? 0xFFFF : (1u << cols) - 1); };
  const __mmask16 load = maskOf(srcCols), store = maskOf(dstCols);
  __m512i r[16], u[16];
  for (int j = 0; j < 16; ++j)
    r[j] = j < srcRows ? _mm512_maskz_loadu_epi32(load, src + j * srcStride) : _mm512_setzero_si512();
  for (int g = 0; g < 4; ++g) {  // rows 4g … 4g+3: u[4g + c] holds, in lane L, column 4L + c of those rows
    const __m512i t0 = _mm512_unpacklo_epi32(r[4 * g], r[4 * g + 1]), t1 = _mm512_unpackhi_epi32(r[4 * g], r[4 * g + 1]);
    const __m512i t2 = _mm512_unpacklo_epi32(r[4 * g + 2], r[4 * g + 3]);
    const __m512i t3 = _mm512_unpackhi_epi32(r[4 * g + 2], r[4 * g + 3]);
    u[4 * g] = _mm512_unpacklo_epi64(t0, t2);
    u[4 * g + 1] = _mm512_unpackhi_epi64(t0, t2);
    u[4 * g + 2] = _mm512_unpacklo_epi64(t1, t3);
    u[4 * g + 3] = _mm512_unpackhi_epi64(t1, t3);
  }
  const __m512 addend = add ? _mm512_loadu_ps(add) : _mm512_setzero_ps();
  const auto put = [&](int64_t row, __m512i v) {
    if (add) v = _mm512_castps_si512(_mm512_add_ps(_mm512_castsi512_ps(v), addend));
    _mm512_mask_storeu_epi32(dst + row * dstStride, store, v);
  };
  for (int c = 0; c < 4; ++c) {  // lanes [a0, a2, b0, b2] (0x88) and [a1, a3, b1, b3] (0xDD), twice
    const __m512i v0 = _mm512_shuffle_i32x4(u[c], u[4 + c], 0x88), v1 = _mm512_shuffle_i32x4(u[c], u[4 + c], 0xDD);
    const __m512i w0 = _mm512_shuffle_i32x4(u[8 + c], u[12 + c], 0x88);
    const __m512i w1 = _mm512_shuffle_i32x4(u[8 + c], u[12 + c], 0xDD);
    if (c < dstRows) put(c, _mm512_shuffle_i32x4(v0, w0, 0x88));
    if (c + 8 < dstRows) put(c + 8, _mm512_shuffle_i32x4(v0, w0, 0xDD));
    if (c + 4 < dstRows) put(c + 4, _mm512_shuffle_i32x4(v1, w1, 0x88));
    if (c + 12 < dstRows) put(c + 12, _mm512_shuffle_i32x4(v1, w1, 0xDD));
  }
}
#pragma GCC diagnostic pop
#endif

// `count` positions of one C0 = 16 block (`lanes` channels real) to or from `lanes` plain rows `stride` apart,
// 32-bit elements: 16 positions × 16 lanes at a time transposed in registers with AVX-512 (a build for a CPU that
// has it, KILN_NATIVE_ARCH), instead of 256 scalar moves. Spare lanes are written as zeros going to the blocks.
template <bool kToBlocks>
void transposeBlock(const uint32_t* from, uint32_t* to, int64_t count, int64_t lanes, int64_t stride,
                    int64_t positionStride = 16, const float* add = nullptr) {
  int64_t i = 0;
#if defined(__AVX512F__)
  for (; i < count; i += 16) {  // the last step may take fewer than 16 positions
    const int64_t positions = std::min<int64_t>(16, count - i);
    if constexpr (kToBlocks)
      transpose16x16(from + i, stride, lanes, positions, to + i * 16, 16, positions, 16, add);
    else
      transpose16x16(from + i * positionStride, positionStride, positions, 16, to + i, stride, lanes, positions);
  }
#endif
  for (; i < count; ++i)
    for (int64_t lane = 0; lane < 16; ++lane)
      if constexpr (kToBlocks) {
        uint32_t v = lane < lanes ? from[lane * stride + i] : 0;
        if (add) v = std::bit_cast<uint32_t>(std::bit_cast<float>(v) + add[lane]);
        to[i * 16 + lane] = v;
      } else if (lane < lanes) {
        to[lane * stride + i] = from[i * positionStride + lane];
      }
}

// NCHW [N, C, HW] <-> NC1HWC0 [N, C1, HW, C0]: block (n, k) gathers the planes of channels k·C0 … k·C0 + C0 - 1.
template <typename T>
void nc1hwc0(const T* x, T* y, int64_t n, int64_t c, int64_t hw, int64_t c0, bool toBlocked) {
  const int64_t c1 = ceilDiv(c, c0);
  parallelFor(static_cast<size_t>(n * c1), piecesOf(hw * c0), 1, [&](size_t first, size_t last) {
    for (auto b = static_cast<int64_t>(first); b < static_cast<int64_t>(last); ++b) {
      const int64_t ni = b / c1, k = b % c1, lanes = std::min(c0, c - k * c0);
      const int64_t plane0 = (ni * c + k * c0) * hw, block = b * hw * c0;
      if constexpr (sizeof(T) == 4)
        if (c0 == 16) {
          const auto* from = reinterpret_cast<const uint32_t*>(x);
          auto* to = reinterpret_cast<uint32_t*>(y);
          if (toBlocked)
            transposeBlock<true>(from + plane0, to + block, hw, lanes, hw);
          else
            transposeBlock<false>(from + block, to + plane0, hw, lanes, hw);
          continue;
        }
      for (int64_t t0 = 0; t0 < hw; t0 += kPlaneTile) {
        const int64_t t1 = std::min(hw, t0 + kPlaneTile);
        for (int64_t lane = 0; lane < lanes; ++lane) {
          const int64_t plane = plane0 + lane * hw;
          if (toBlocked)
            for (int64_t i = t0; i < t1; ++i) y[block + i * c0 + lane] = x[plane + i];
          else
            for (int64_t i = t0; i < t1; ++i) y[plane + i] = x[block + i * c0 + lane];
        }
      }
    }
  });
}

// NCHW weights [N, C, HW] <-> FRACTAL_Z [C1·HW, N1·16, C0]: element (n, c, i) sits at ((c / C0 · HW + i) · N1·16 + n)
// · C0 + c % C0. Per (c1, n), each tap i is one run of C0 lanes on the blocked side (read from C0 rows HW apart on
// the plain side), and consecutive n are consecutive runs: for the 1×1 kernels most weights have, a straight copy.
template <typename T>
void fractalZ(const T* x, T* y, int64_t n, int64_t c, int64_t hw, int64_t c0, bool toBlocked) {
  const int64_t c1 = ceilDiv(c, c0), nPad = ceilDiv(n, 16) * 16;
  parallelFor(static_cast<size_t>(c1 * n), piecesOf(hw * c0), 1, [&](size_t first, size_t last) {
    int64_t k = static_cast<int64_t>(first) / n, ni = static_cast<int64_t>(first) % n;
    for (size_t b = first; b < last; ++b) {
      const int64_t lanes = std::min(c0, c - k * c0);
      const T* from = x;
      T* to = y;
      const int64_t plain = (ni * c + k * c0) * hw, blocked = (k * hw * nPad + ni) * c0, step = nPad * c0;
      for (int64_t i = 0; i < hw; ++i)
        for (int64_t lane = 0; lane < lanes; ++lane)
          if (toBlocked)
            to[blocked + i * step + lane] = from[plain + lane * hw + i];
          else
            to[plain + lane * hw + i] = from[blocked + i * step + lane];
      if (++ni == n) ni = 0, ++k;
    }
  });
}

// [..., H, W] <-> FRACTAL_NZ [..., W1, H1·16, 16]: each row h of a matrix is W1 runs of (up to) 16 contiguous elements.
template <typename T>
void fractalNz(const T* x, T* y, int64_t batch, int64_t h, int64_t w, bool toBlocked) {
  const int64_t w1 = ceilDiv(w, 16), hPad = ceilDiv(h, 16) * 16;
  parallelFor(static_cast<size_t>(batch * h), piecesOf(w), 1, [&](size_t first, size_t last) {
    for (auto r = static_cast<int64_t>(first); r < static_cast<int64_t>(last); ++r) {
      const int64_t bi = r / h, hi = r % h;
      for (int64_t k = 0; k < w1; ++k) {
        const int64_t plain = r * w + k * 16, blocked = (bi * w1 * hPad + k * hPad + hi) * 16;
        const int64_t run = std::min<int64_t>(16, w - k * 16);
        const T* from = toBlocked ? x + plain : x + blocked;
        T* to = toBlocked ? y + blocked : y + plain;
        // A whole run as one fixed-size copy (a few vector moves, inlined): a call to memmove per 16 elements was
        // most of a small transformer's NZ conversions.
        if (run == 16)
          std::memcpy(to, from, 16 * sizeof(T));
        else
          std::copy_n(from, run, to);
      }
    }
  });
}

template <typename T>
bool copyTyped(const T* x, T* y, Format blockedFormat, bool toBlocked, const std::vector<int64_t>& l, int64_t c0) {
  switch (blockedFormat) {
    case Format::NC1HWC0:
      if (l.size() != 4) return false;
      nc1hwc0(x, y, l[0], l[1], l[2] * l[3], c0, toBlocked);
      return true;
    case Format::FRACTAL_Z:
      if (l.size() != 4) return false;
      fractalZ(x, y, l[0], l[1], l[2] * l[3], c0, toBlocked);
      return true;
    case Format::FRACTAL_NZ: {
      if (l.size() < 2) return false;
      int64_t batch = 1;
      for (size_t a = 0; a + 2 < l.size(); ++a) batch *= l[a];
      fractalNz(x, y, batch, l[l.size() - 2], l.back(), toBlocked);
      return true;
    }
    default: return false;
  }
}

}  // namespace

bool copyBlockedLayout(const uint8_t* x, uint8_t* y, Format src, Format dst, const std::vector<int64_t>& logical,
                       int elem, int64_t c0) {
  const bool toBlocked = isPlain(src);
  if (toBlocked == isPlain(dst)) return false;  // plain to plain or blocked to blocked: the generic copy
  const Format blocked = toBlocked ? dst : src;
  // (The tensors' storage is allocated for their element type, so the casts below see aligned elements.)
  switch (elem) {
    case 1: return copyTyped(x, y, blocked, toBlocked, logical, c0);
    case 2:
      return copyTyped(reinterpret_cast<const uint16_t*>(x), reinterpret_cast<uint16_t*>(y), blocked, toBlocked,
                       logical, c0);
    case 4:
      return copyTyped(reinterpret_cast<const uint32_t*>(x), reinterpret_cast<uint32_t*>(y), blocked, toBlocked,
                       logical, c0);
    case 8:
      return copyTyped(reinterpret_cast<const uint64_t*>(x), reinterpret_cast<uint64_t*>(y), blocked, toBlocked,
                       logical, c0);
    default: return false;
  }
}

void blocksToRows(const float* blocks, int64_t count, int64_t lanes, float* rows, int64_t stride,
                  int64_t positionStride) {
  transposeBlock<false>(reinterpret_cast<const uint32_t*>(blocks), reinterpret_cast<uint32_t*>(rows), count, lanes,
                        stride, positionStride);
}
void rowsToBlocks(const float* rows, int64_t stride, int64_t count, int64_t lanes, float* blocks, const float* add) {
  transposeBlock<true>(reinterpret_cast<const uint32_t*>(rows), reinterpret_cast<uint32_t*>(blocks), count, lanes,
                       stride, 16, add);
}

}  // namespace kiln
