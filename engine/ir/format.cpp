#include "ir/format.h"

#include <array>

#include "ir/shape.h"

namespace kiln {
namespace {
constexpr std::array<std::string_view, 9> kNames{"ND",        "NCHW",       "NHWC", "NC1HWC0", "FRACTAL_Z",
                                                 "FRACTAL_NZ", "HWCN", "NCDHW", "NDHWC"};
int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
}  // namespace

std::string_view formatName(Format f) { return kNames[static_cast<size_t>(f)]; }

std::optional<Format> formatFromName(std::string_view name) {
  for (size_t i = 0; i < kNames.size(); ++i)
    if (kNames[i] == name) return static_cast<Format>(i);
  return std::nullopt;
}

int64_t blockC0(int elementBytes) { return elementBytes == 1 ? 32 : 16; }

std::optional<std::vector<int64_t>> physicalExtents(const std::vector<int64_t>& s, Format to, int elementBytes) {
  const int64_t c0 = blockC0(elementBytes);
  std::vector<int64_t> out;
  switch (to) {
    case Format::ND:
    case Format::NCHW:
    case Format::NCDHW:
      out = s;
      break;
    case Format::NHWC:
      if (s.size() != 4) return std::nullopt;
      out = {s[0], s[2], s[3], s[1]};
      break;
    case Format::HWCN:
      if (s.size() != 4) return std::nullopt;
      out = {s[2], s[3], s[1], s[0]};
      break;
    case Format::NDHWC:
      if (s.size() != 5) return std::nullopt;
      out = {s[0], s[2], s[3], s[4], s[1]};
      break;
    case Format::NC1HWC0:  // (N, ceil(C/C0), H, W, C0)
      if (s.size() != 4) return std::nullopt;
      out = {s[0], ceilDiv(s[1], c0), s[2], s[3], c0};
      break;
    case Format::FRACTAL_Z:  // weights N,C,H,W -> (C1·H·W, ceil(N/16), 16, C0)
    {
      if (s.size() != 4) return std::nullopt;
      auto c1hw = checkedProduct({ceilDiv(s[1], c0), s[2], s[3]});
      if (!c1hw) return std::nullopt;
      out = {*c1hw, ceilDiv(s[0], 16), 16, c0};
      break;
    }
    case Format::FRACTAL_NZ:  // (..., H, W) -> (..., ceil(W/16), ceil(H/16), 16, 16)
    {
      if (s.size() < 2) return std::nullopt;
      out.assign(s.begin(), s.end() - 2);
      const int64_t h = s[s.size() - 2], w = s[s.size() - 1];
      out.insert(out.end(), {ceilDiv(w, 16), ceilDiv(h, 16), 16, 16});
      break;
    }
  }
  for (int64_t e : s)
    if (e < 0) return std::nullopt;
  if (!checkedProduct(out)) return std::nullopt;
  return out;
}

}  // namespace kiln
