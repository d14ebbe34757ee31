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

namespace kiln {

bool isBlockedFormat(Format f) {
  return f == Format::NC1HWC0 || f == Format::FRACTAL_Z || f == Format::FRACTAL_NZ;
}

std::vector<int64_t> nchwPlacement(const std::vector<int64_t>& dims) {
  if (dims.size() >= 4) return dims;
  if (dims.size() == 1) return {1, dims[0], 1, 1};
  std::vector<int64_t> out(4 - dims.size(), 1);
  out.insert(out.end(), dims.begin(), dims.end());
  return out;
}

std::optional<Shape> physicalShape(const Shape& logical, Format to, int elementBytes) {
  if (!logical.rankKnown()) return std::nullopt;
  if (auto e = logical.staticExtents()) {
    auto p = physicalExtents(*e, to, elementBytes);
    if (!p) return std::nullopt;
    return Shape::ofStatic(*p);
  }
  const auto& d = logical.dims();
  const int64_t c0 = blockC0(elementBytes);
  switch (to) {
    case Format::ND:
    case Format::NCHW:
    case Format::NCDHW:
      return logical;
    case Format::NC1HWC0:  // only C is blocked: N, H and W may stay symbolic
      if (d.size() != 4 || !d[1].isStatic()) return std::nullopt;
      return Shape({d[0], Dim::fixed(ceilDiv(d[1].value, c0)), d[2], d[3], Dim::fixed(c0)});
    case Format::FRACTAL_NZ: {  // the matrix dims are blocked; batch dims keep their symbols
      if (d.size() < 2 || !d[d.size() - 2].isStatic() || !d.back().isStatic()) return std::nullopt;
      std::vector<Dim> out(d.begin(), d.end() - 2);
      const int64_t h = d[d.size() - 2].value, w = d.back().value;
      for (int64_t e : {ceilDiv(w, 16), ceilDiv(h, 16), int64_t{16}, int64_t{16}}) out.push_back(Dim::fixed(e));
      return Shape(std::move(out));
    }
    default:  // permuted and fractal weight layouts need every extent
      return std::nullopt;
  }
}

std::optional<Shape> logicalShape(const Shape& physical, Format from, const std::vector<int64_t>& origin) {
  if (!isBlockedFormat(from)) return physical;
  if (!physical.rankKnown()) return std::nullopt;
  const auto& p = physical.dims();
  auto pick = [&](size_t originIndex, const Dim& fromPhysical) -> std::optional<Dim> {
    if (originIndex < origin.size() && origin[originIndex] >= 0) return Dim::fixed(origin[originIndex]);
    if (fromPhysical.isStatic() || fromPhysical.isSymbolic()) return fromPhysical;
    return std::nullopt;
  };
  std::vector<Dim> out;
  switch (from) {
    case Format::NC1HWC0: {  // (N, C1, H, W, C0) -> (N, C, H, W); C only from the origin
      if (p.size() != 5 || origin.size() != 4 || origin[1] < 0) return std::nullopt;
      for (auto [oi, pi] : {std::pair<size_t, size_t>{0, 0}, {1, 1}, {2, 2}, {3, 3}}) {
        auto dim = oi == 1 ? std::optional<Dim>(Dim::fixed(origin[1])) : pick(oi, p[pi]);
        if (!dim) return std::nullopt;
        out.push_back(*dim);
      }
      break;
    }
    case Format::FRACTAL_NZ: {  // (..., W1, H1, 16, 16) -> (..., H, W); H and W only from the origin
      if (p.size() < 4 || origin.size() != p.size() - 2) return std::nullopt;
      const size_t lead = p.size() - 4;
      for (size_t i = 0; i < lead; ++i) {
        auto dim = pick(i, p[i]);
        if (!dim) return std::nullopt;
        out.push_back(*dim);
      }
      if (origin[lead] < 0 || origin[lead + 1] < 0) return std::nullopt;
      out.push_back(Dim::fixed(origin[lead]));
      out.push_back(Dim::fixed(origin[lead + 1]));
      break;
    }
    default:  // FRACTAL_Z folds every axis: the origin must be complete
      if (origin.size() != 4) return std::nullopt;
      for (int64_t e : origin) {
        if (e < 0) return std::nullopt;
        out.push_back(Dim::fixed(e));
      }
  }
  return Shape(std::move(out));
}

}  // namespace kiln
