// kiln:TransData and kiln:TransDataCast: element positions of the NPU layouts (format.h gives their extents).
//   NC1HWC0    x[n][c][h][w]  -> y[n][c / C0][h][w][c % C0]
//   FRACTAL_Z  w[n][c][h][w]  -> y[(c / C0 · H + h) · W + w][n / 16][n % 16][c % C0]
//   FRACTAL_NZ x[...][h][w]   -> y[...][w / 16][h / 16][h % 16][w % 16]
// Every logical element is copied to its physical place; the rest of a block (C0 / 16 padding) stays zero, so the
// padded bytes are real and deterministic.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <span>
#include <utility>

#include "kernels/kernel_util.h"
#include "kernels/transdata.h"
#include "kernels/transdata_blocked.h"
#include "ir/graph.h"
#include "ir/shape.h"
#include "util/parallel_for.h"

namespace kiln {
namespace {

// (Indices as an initializer list or a span: the per-axis tables below call this for every extent of every axis of
// every weight, and a temporary vector each time was a third of re-laying out a model's small weights.)
int64_t rowMajor(std::span<const int64_t> idx, const std::vector<int64_t>& dims) {
  int64_t off = 0;
  for (size_t i = 0; i < dims.size(); ++i) off = off * dims[i] + idx[i];
  return off;
}
int64_t rowMajor(std::initializer_list<int64_t> idx, const std::vector<int64_t>& dims) {
  return rowMajor(std::span<const int64_t>(idx.begin(), idx.size()), dims);
}

// Physical index of the logical element `i` (logical extents `l`) in layout `f` with physical extents `p`.
int64_t physicalOffset(Format f, const std::vector<int64_t>& i, const std::vector<int64_t>& l,
                       const std::vector<int64_t>& p, int64_t c0) {
  switch (f) {
    case Format::NHWC: return rowMajor({i[0], i[2], i[3], i[1]}, p);
    case Format::HWCN: return rowMajor({i[2], i[3], i[1], i[0]}, p);
    case Format::NDHWC: return rowMajor({i[0], i[2], i[3], i[4], i[1]}, p);
    case Format::NC1HWC0: return rowMajor({i[0], i[1] / c0, i[2], i[3], i[1] % c0}, p);
    case Format::FRACTAL_Z:
      return rowMajor({(i[1] / c0 * l[2] + i[2]) * l[3] + i[3], i[0] / 16, i[0] % 16, i[1] % c0}, p);
    case Format::FRACTAL_NZ: {  // the leading axes row-major, then the four fractal ones
      const size_t lead = i.size() - 2;
      const int64_t h = i[lead], w = i.back();
      int64_t off = 0;
      for (size_t k = 0; k < lead; ++k) off = off * p[k] + i[k];
      size_t axis = lead;
      for (const int64_t t : {w / 16, h / 16, h % 16, w % 16}) off = off * p[axis++] + t;
      return off;
    }
    default: return rowMajor(i, l);  // ND, NCHW, NCDHW: physical == logical
  }
}

}  // namespace

namespace {

// Bytes someone else owns (the arena block transDataInto writes to), for the duration of one conversion.
class BorrowedStorage final : public Storage {
 public:
  explicit BorrowedStorage(std::span<uint8_t> bytes) : bytes_(bytes) {}
  const uint8_t* data() const override { return bytes_.data(); }
  size_t size() const override { return bytes_.size(); }

 private:
  std::span<uint8_t> bytes_;
};

// transDataTensor into fresh heap bytes, or into `into` when it is given (and then exactly the result's size).
Tensor convertLayoutInto(const Tensor& x, Format src, Format dst, const std::vector<int64_t>& origin,
                         int64_t maxOutputBytes, std::span<uint8_t> into) {
  const int elem = dtypeSize(x.dtype());
  if (!x.valid() || elem == 0) return Tensor();
  // The logical extents: x's own for a plain layout, else the origin (checked against x's physical extents).
  std::vector<int64_t> logical = x.dims();
  if (src != Format::ND && src != Format::NCHW && src != Format::NCDHW) {
    const auto l = logicalShape(Shape::ofStatic(x.dims()), src, origin);
    if (!l || !l->staticExtents()) return Tensor();
    logical = *l->staticExtents();
    if (physicalExtents(logical, src, elem) != x.dims()) return Tensor();
  }
  const auto inPhys = physicalExtents(logical, src, elem);
  const auto outPhys = physicalExtents(logical, dst, elem);
  if (!inPhys || !outPhys) return Tensor();
  const auto bytes = checkedMul(*checkedProduct(*outPhys), elem);
  if (!bytes || *bytes > maxOutputBytes) return Tensor();
  if (!into.empty() && static_cast<int64_t>(into.size()) != *bytes) return Tensor();
  const int64_t elements = checkedProduct(logical).value_or(0);
  // Zeros where the layout pads (C to C0, N to 16); without padding every byte is copied over, so none is zeroed.
  const bool padded = logical.empty() || elements == 0 || *bytes != elements * elem;
  std::shared_ptr<Storage> out;
  uint8_t* target = nullptr;
  if (into.empty()) {
    auto heap = std::make_shared<HeapStorage>(static_cast<size_t>(*bytes),
                                              padded ? HeapStorage::Start::Zeroed : HeapStorage::Start::Unset);
    target = heap->data();
    out = std::move(heap);
  } else {
    if (padded) std::fill(into.begin(), into.end(), uint8_t{0});
    target = into.data();
    out = std::make_shared<BorrowedStorage>(into);
  }
  if (logical.empty() || elements == 0) {
    if (logical.empty()) std::memcpy(target, x.data(), static_cast<size_t>(elem));  // a scalar
    return Tensor(x.dtype(), *outPhys, std::move(out));
  }
  const int64_t c0 = blockC0(elem);
  if (copyBlockedLayout(x.data(), target, src, dst, logical, elem, c0))
    return Tensor(x.dtype(), *outPhys, std::move(out));
  // Every layout's offset is a sum of one term per logical axis (offset(0) = 0), so each axis gets a table of its
  // terms and the copy walks rows of the last axis adding table entries: no per-element index arithmetic.
  const size_t rank = logical.size();
  auto axisTerms = [&](Format f, const std::vector<int64_t>& phys) {
    std::vector<std::vector<int64_t>> terms(rank);
    std::vector<int64_t> unit(rank, 0);
    for (size_t a = 0; a < rank; ++a) {
      for (int64_t k = 0; k < logical[a]; ++k) {
        unit[a] = k;
        terms[a].push_back(physicalOffset(f, unit, logical, phys, c0));
      }
      unit[a] = 0;
    }
    return terms;
  };
  auto from = axisTerms(src, *inPhys);
  auto to = axisTerms(dst, *outPhys);
  // The copy's inner axis: the one with the longest runs contiguous on both sides, else the one contiguous in the
  // output (FRACTAL_Z weights: c, whose 16 elements sit side by side), so writes go in order. The axes' order
  // does not matter otherwise: an offset is a sum of per-axis terms.
  auto runLength = [](const std::vector<int64_t>& f, const std::vector<int64_t>& t) {
    size_t n = 1;
    while (n < f.size() && f[n] == f[n - 1] + 1 && t[n] == t[n - 1] + 1) ++n;
    return n;
  };
  size_t innerAxis = rank - 1;
  auto score = [&](size_t a) {
    const bool outContiguous = to[a].size() > 1 && to[a][1] == to[a][0] + 1;
    return std::pair(runLength(from[a], to[a]), outContiguous);
  };
  for (size_t a = 0; a < rank; ++a)
    if (score(a) > score(innerAxis)) innerAxis = a;
  if (innerAxis != rank - 1) {
    std::swap(from[innerAxis], from[rank - 1]);
    std::swap(to[innerAxis], to[rank - 1]);
    std::swap(logical[innerAxis], logical[rank - 1]);
  }
  const int64_t inner = logical.back();
  const std::vector<int64_t>& fromLast = from.back();
  const std::vector<int64_t>& toLast = to.back();
  // The last axis in runs contiguous on both sides (16 elements of a fractal row, a whole row between plain
  // layouts): one memcpy a run, not one an element, so re-laying out a model's weights runs at memory speed.
  struct Run {
    int64_t k, length;
  };
  std::vector<Run> runs;
  for (int64_t k = 0; k < inner; ++k) {
    const auto i = static_cast<size_t>(k);
    if (!runs.empty() && toLast[i] == toLast[i - 1] + 1 && fromLast[i] == fromLast[i - 1] + 1)
      ++runs.back().length;
    else
      runs.push_back({k, 1});
  }
  const size_t e = static_cast<size_t>(elem);
  // Runs of one element (no axis contiguous on both sides): a typed move each, not a memcpy call each.
  const bool single = runs.size() == static_cast<size_t>(inner);
  const bool blockRuns = std::all_of(runs.begin(), runs.end(), [&](const Run& r) { return r.length * elem == 32; });
  const uint8_t* source = x.data();  // (a virtual call: once, not per element)
  auto copyElements = [&]<typename T>(T, int64_t fromBase, int64_t toBase) {
    for (size_t k = 0; k < static_cast<size_t>(inner); ++k) {
      T v;
      std::memcpy(&v, source + static_cast<size_t>(fromBase + fromLast[k]) * sizeof(T), sizeof(T));
      std::memcpy(target + static_cast<size_t>(toBase + toLast[k]) * sizeof(T), &v, sizeof(T));
    }
  };
  auto copyRow = [&](const std::vector<int64_t>& idx) {
    int64_t fromBase = 0, toBase = 0;
    for (size_t a = 0; a + 1 < rank; ++a) {
      fromBase += from[a][static_cast<size_t>(idx[a])];
      toBase += to[a][static_cast<size_t>(idx[a])];
    }
    if (single && e == 2) copyElements(uint16_t{}, fromBase, toBase);
    else if (single && e == 4) copyElements(uint32_t{}, fromBase, toBase);
    else if (single && e == 1) copyElements(uint8_t{}, fromBase, toBase);
    else if (blockRuns)  // a fractal row of 16 fp16 values: a fixed-size copy the compiler inlines
      for (const Run& r : runs)
        std::memcpy(target + static_cast<size_t>(toBase + toLast[static_cast<size_t>(r.k)]) * e,
                    source + static_cast<size_t>(fromBase + fromLast[static_cast<size_t>(r.k)]) * e, 32);
    else
      for (const Run& r : runs)
        std::memcpy(target + static_cast<size_t>(toBase + toLast[static_cast<size_t>(r.k)]) * e,
                    source + static_cast<size_t>(fromBase + fromLast[static_cast<size_t>(r.k)]) * e,
                    static_cast<size_t>(r.length) * e);
  };
  if (rank == 1) {
    copyRow({0});
    return Tensor(x.dtype(), *outPhys, std::move(out));
  }
  // The rows (every axis but the last), split across the cores by their first axis: no two pieces write one place.
  const size_t perFirst = static_cast<size_t>(elements / logical[0]);
  parallelFor(static_cast<size_t>(logical[0]), std::max<size_t>(1, (size_t{1} << 16) / perFirst), 1,
              [&](size_t first, size_t last) {
                std::vector<int64_t> idx(rank, 0);
                idx[0] = static_cast<int64_t>(first);
                for (;;) {
                  copyRow(idx);
                  size_t d = rank - 1;  // next row: odometer over every axis but the last
                  while (d > 0) {
                    --d;
                    if (++idx[d] < (d == 0 ? static_cast<int64_t>(last) : logical[d])) break;
                    if (d == 0) return;
                    idx[d] = 0;
                  }
                }
              });
  return Tensor(x.dtype(), *outPhys, std::move(out));
}

}  // namespace

Tensor transDataTensor(const Tensor& x, Format src, Format dst, const std::vector<int64_t>& origin,
                       int64_t maxOutputBytes) {
  return convertLayoutInto(x, src, dst, origin, maxOutputBytes, {});
}

bool transDataInto(const Tensor& x, Format src, Format dst, const std::vector<int64_t>& origin, std::span<uint8_t> into) {
  if (into.empty() || (x.data() < into.data() + into.size() && into.data() < x.data() + x.byteSize())) return false;
  return convertLayoutInto(x, src, dst, origin, static_cast<int64_t>(into.size()), into).valid();
}

Tensor permuteTensor(const Tensor& x, const std::vector<size_t>& perm, int64_t maxOutputBytes) {
  const size_t rank = x.dims().size();
  const int elem = dtypeSize(x.dtype());
  if (!x.valid() || elem <= 0 || perm.size() != rank || int64_t(x.byteSize()) > maxOutputBytes) return Tensor();
  std::vector<bool> seen(rank, false);
  for (size_t p : perm) {
    if (p >= rank || seen[p]) return Tensor();
    seen[p] = true;
  }
  std::vector<int64_t> dims(rank), inStrides(rank, 1);
  for (size_t a = rank; a-- > 1;) inStrides[a - 1] = inStrides[a] * x.dims()[a];
  std::vector<int64_t> strides(rank);  // x's stride along each result axis
  for (size_t i = 0; i < rank; ++i) {
    dims[i] = x.dims()[perm[i]];
    strides[i] = inStrides[perm[i]];
  }
  auto out = std::make_shared<HeapStorage>(x.byteSize(), HeapStorage::Start::Unset);
  const uint8_t* src = x.data();
  uint8_t* dst = out->data();
  std::vector<int64_t> idx(rank, 0);
  int64_t from = 0;
  for (int64_t k = 0; k < x.numel(); ++k) {
    std::memcpy(dst + size_t(k) * size_t(elem), src + size_t(from) * size_t(elem), size_t(elem));
    for (size_t a = rank; a-- > 0;) {  // row-major increment of the result index, tracking the source offset
      from += strides[a];
      if (++idx[a] < dims[a]) break;
      from -= strides[a] * dims[a];
      idx[a] = 0;
    }
  }
  return Tensor(x.dtype(), std::move(dims), std::move(out));
}

}  // namespace kiln

namespace kiln::kernels {
namespace {

std::vector<Tensor> convertLayout(const KernelContext& ctx, const Tensor& x) {
  const auto src = formatFromName(ctx.node().attrString("src_format", "ND"));
  const auto dst = formatFromName(ctx.node().attrString("dst_format", ""));
  if (!src || !dst) ctx.fail("src_format / dst_format is not a known layout");
  Tensor y = transDataTensor(x, *src, *dst, ctx.node().attrInts("origin_shape"), ctx.limits().maxOutputBytes);
  if (!y.valid()) return {};  // a layout this tensor does not fit (or too large): decline
  return {y};
}

std::vector<Tensor> transData(const KernelContext& ctx) { return convertLayout(ctx, ctx.required(0)); }

}  // namespace

bool transDataNodeInto(const Node& n, const Tensor& x, std::span<uint8_t> into) {
  if (n.domain() != "kiln" || n.opType() != "TransData") return false;
  const auto src = formatFromName(n.attrString("src_format", "ND"));
  const auto dst = formatFromName(n.attrString("dst_format", ""));
  return src && dst && transDataInto(x, *src, *dst, n.attrInts("origin_shape"), into);
}

namespace {

// The element values do not depend on the order of the two conversions; only which element size was blocked does.
std::vector<Tensor> transDataCast(const KernelContext& ctx) {
  const auto to = dtypeFromOnnx(static_cast<int>(ctx.node().attrInt("to", 0)));
  if (!to) ctx.fail("attribute 'to' is not a known element type");
  if (ctx.node().attrInt("cast_first", 0)) {
    const Tensor c = convertTensor(ctx.required(0), *to, ctx.limits().maxOutputBytes);
    return c.valid() ? convertLayout(ctx, c) : std::vector<Tensor>{};
  }
  auto y = convertLayout(ctx, ctx.required(0));
  if (y.empty()) return y;
  const Tensor c = convertTensor(y[0], *to, ctx.limits().maxOutputBytes);
  if (!c.valid()) return {};
  return {c};
}

}  // namespace

void registerTransDataKernels(KernelRegistry& r) {
  r.add("TransData", transData, "kiln");
  r.add("TransDataCast", transDataCast, "kiln");
}

}  // namespace kiln::kernels
