#pragma once
// Cache-blocked copies between the plain layouts (NCHW / ND) and the NPU's blocked ones (NC1HWC0, FRACTAL_Z,
// FRACTAL_NZ), for transDataTensor. The generic per-axis-table copy walks the axis contiguous in the output, which
// for NCHW -> NC1HWC0 reads one element per channel plane (a stride of H·W elements): a third of a compiled
// ResNet-50 run went there. These walk tiles small enough that both the reads and the writes stay in L1.
#include <cstdint>
#include <vector>

#include "ir/format.h"

namespace kiln {

// Copies the elements of `x` (layout `src`, logical extents `logical`, elements of `elem` bytes, C0 lanes `c0`) to
// `y` in layout `dst`. `y` holds the whole physical result and its padding lanes are already zero. Returns false,
// writing nothing, when this pair of layouts or this element size has no blocked copy here.
bool copyBlockedLayout(const uint8_t* x, uint8_t* y, Format src, Format dst, const std::vector<int64_t>& logical,
                       int elem, int64_t c0);

// `count` positions of one NC1HWC0 block of 16 fp32 lanes ([count][16]; reading every positionStride / 16-th
// position, for a strided window) to `lanes` plain rows `stride` apart, and back (the spare lanes written as zeros):
// the transposes convolutions on blocked activations read and write with. `add` (16 floats, zero beyond `lanes`, or
// null): added to every position written into the blocks (a convolution's bias on its way in: no pass of its own).
void blocksToRows(const float* blocks, int64_t count, int64_t lanes, float* rows, int64_t stride,
                  int64_t positionStride = 16);
void rowsToBlocks(const float* rows, int64_t stride, int64_t count, int64_t lanes, float* blocks,
                  const float* add = nullptr);

}  // namespace kiln
