#pragma once
// Data layouts. ND/NCHW/NHWC are logical layouts; NC1HWC0, FRACTAL_Z and FRACTAL_NZ are the NPU's physical layouts
// (channel or matrix blocking to C0 / 16) whose padded extents cost real bytes.
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace kiln {

class Shape;

enum class Format : uint8_t { ND, NCHW, NHWC, NC1HWC0, FRACTAL_Z, FRACTAL_NZ, HWCN, NCDHW, NDHWC };

std::string_view formatName(Format f);
std::optional<Format> formatFromName(std::string_view name);

// C0 for a dtype's element size: 16 for 2- and 4-byte types, 32 for 1-byte types (the cube's block width).
int64_t blockC0(int elementBytes);

// Physical extents of a logical NCHW (or ND matrix) shape stored in `to`. Nullopt when the layout does not apply to
// this rank (e.g. NC1HWC0 of a rank-2 tensor) or an extent overflows.
std::optional<std::vector<int64_t>> physicalExtents(const std::vector<int64_t>& nchwOrNd, Format to,
                                                    int elementBytes);

// NC1HWC0, FRACTAL_Z and FRACTAL_NZ: layouts whose shape is physical (padded blocks), not the logical one.
bool isBlockedFormat(Format f);

// Where a tensor of rank < 4 sits in NCHW when it is laid out in NC1HWC0 (an operand broadcast against an NCHW
// activation): a vector is per channel ([C] -> [1, C, 1, 1], as a norm's parameters are read), higher ranks align
// to the right as NumPy broadcasting does ([C, 1, 1] -> [1, C, 1, 1]). Rank 4 and above are returned unchanged.
std::vector<int64_t> nchwPlacement(const std::vector<int64_t>& dims);

// physicalExtents over a Shape that may hold symbolic dims: only the blocked axes must be static (C for NC1HWC0, the
// last two dims for FRACTAL_NZ, everything for FRACTAL_Z); other dims keep their symbol, so a [batch, 3, 224, 224]
// activation becomes [batch, 1, 224, 224, 16]. Nullopt when the layout does not apply or a blocked axis is not static.
std::optional<Shape> physicalShape(const Shape& logical, Format to, int elementBytes);
// The inverse: the logical shape of a tensor stored in `from`, given the origin (logical) extents its blocks hide.
// An origin entry of -1 is taken from the physical shape where the layout keeps that dim (leading and N/H/W dims);
// nullopt when a needed extent is missing or the ranks do not fit.
std::optional<Shape> logicalShape(const Shape& physical, Format from, const std::vector<int64_t>& origin);

}  // namespace kiln
