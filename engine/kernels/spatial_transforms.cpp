// Spatial transforms of opsets 18 to 20: AffineGrid-20 (the sampling grid of an affine map), GridSample-16/20
// (sampling X at a grid; modes linear/bilinear and nearest over any number of spatial axes, cubic/bicubic over 2-D
// ones; padding zeros, border or reflection), Col2Im-18 (the adjoint of im2col: blocks summed back into an image) and
// CenterCropPad-18 (crop or zero-pad each named axis around its centre). Floats computed in double, rounded once.
#include <array>
#include <cmath>

#include "ir/graph.h"
#include "kernels/kernel_util.h"
#include "kernels/nn_kernels.h"

namespace kiln::kernels {
namespace {

// numpy's linspace(-1, 1, n), scaled by (n - 1) / n without align_corners: the centres of n cells in [-1, 1].
std::vector<double> baseCoordinates(int64_t n, bool alignCorners) {
  std::vector<double> c(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    double v = n == 1 ? -1.0 : -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(n - 1);
    if (!alignCorners) v = v * static_cast<double>(n - 1) / static_cast<double>(n);
    c[static_cast<size_t>(i)] = v;
  }
  return c;
}

// theta [N, 2, 3] and size [N, C, H, W] -> grid [N, H, W, 2] holding (x, y); theta [N, 3, 4] and [N, C, D, H, W] ->
// [N, D, H, W, 3] holding (x, y, z). Each point is theta[n] · (x, y[, z], 1) over the base coordinates.
std::vector<Tensor> affineGrid(const KernelContext& ctx) {
  const Tensor& theta = ctx.required(0);
  const std::vector<int64_t> size = intValues(ctx, ctx.required(1), "size");
  if (size.size() != 4 && size.size() != 5) ctx.fail("size must hold 4 or 5 extents");
  const size_t spatial = size.size() - 2;
  const int64_t n = size[0];
  if (theta.dims() != std::vector<int64_t>{n, static_cast<int64_t>(spatial), static_cast<int64_t>(spatial) + 1})
    ctx.fail("theta must be [N, " + std::to_string(spatial) + ", " + std::to_string(spatial + 1) + "]");
  for (int64_t d : size)
    if (d < 0) ctx.fail("size has a negative extent");
  const bool align = ctx.node().attrInt("align_corners", 0) != 0;
  std::vector<Tensor> out;
  dispatch<kFloats>(theta.dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    const std::vector<double> t = nn::loadAll<S, double>(ctx, theta);
    // Spatial extents outermost first (D, H, W); coordinates innermost first (x along W, y along H, z along D).
    std::vector<int64_t> ext(size.begin() + 2, size.end());
    std::vector<std::vector<double>> base;
    for (size_t a = 0; a < spatial; ++a) base.push_back(baseCoordinates(ext[spatial - 1 - a], align));
    std::vector<int64_t> dims{n};
    dims.insert(dims.end(), ext.begin(), ext.end());
    dims.push_back(static_cast<int64_t>(spatial));
    const int64_t points = *checkedProduct(ext);
    checkScratch(ctx, n * points * static_cast<int64_t>(spatial), sizeof(double));
    std::vector<double> g(static_cast<size_t>(n * points) * spatial);
    std::vector<double> p(spatial + 1, 1.0);
    for (int64_t b = 0; b < n; ++b)
      for (int64_t k = 0; k < points; ++k) {
        int64_t rest = k;
        for (size_t a = 0; a < spatial; ++a) {  // a = 0 is x (the innermost extent)
          const int64_t e = ext[spatial - 1 - a];
          p[a] = base[a][static_cast<size_t>(rest % e)];
          rest /= e;
        }
        for (size_t r = 0; r < spatial; ++r) {
          double acc = 0;
          for (size_t c = 0; c <= spatial; ++c)
            acc += t[static_cast<size_t>(b) * spatial * (spatial + 1) + r * (spatial + 1) + c] * p[c];
          g[(static_cast<size_t>(b * points + k)) * spatial + r] = acc;
        }
      }
    out.push_back(nn::storeAll<S>(ctx, dims, g));
  });
  return out;
}

// A grid coordinate in [-1, 1] mapped onto input positions along an axis of `size` elements.
double unnormalize(double g, int64_t size, bool align) {
  return align ? (g + 1) / 2 * static_cast<double>(size - 1) : ((g + 1) * static_cast<double>(size) - 1) / 2;
}

// Reflects x into [lo, hi] as often as it takes.
double reflect(double x, double lo, double hi) {
  const double span = hi - lo;
  if (span <= 0) return lo;
  double d = std::fabs(x - lo);
  const double flips = std::floor(d / span);
  const double r = d - flips * span;
  return static_cast<int64_t>(flips) % 2 == 0 ? lo + r : hi - r;
}

// Keys' cubic convolution weights (A = -0.75, as ONNX's GridSample and Resize use) for a fraction t of a cell.
std::array<double, 4> cubicWeights(double t) {
  constexpr double A = -0.75;
  auto near = [](double d) { return ((A + 2) * d - (A + 3)) * d * d + 1; };
  auto far = [](double d) { return ((A * d - 5 * A) * d + 8 * A) * d - 4 * A; };
  return {far(t + 1), near(t), near(1 - t), far(2 - t)};
}

// Bicubic interpolation at (y, x) over the 4 x 4 taps around it, each read through `tap`.
template <typename Tap>
double cubicSample(double y, double x, Tap tap) {
  const int64_t y0 = static_cast<int64_t>(std::floor(y)), x0 = static_cast<int64_t>(std::floor(x));
  const auto wy = cubicWeights(y - static_cast<double>(y0)), wx = cubicWeights(x - static_cast<double>(x0));
  double v = 0;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) v += wy[static_cast<size_t>(i)] * wx[static_cast<size_t>(j)] * tap(y0 - 1 + i, x0 - 1 + j);
  return v;
}

std::vector<Tensor> gridSample(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  const Tensor& grid = ctx.required(1);
  const size_t rank = x.dims().size();
  if (rank < 3 || grid.dims().size() != rank) ctx.fail("grid must have X's rank");
  const size_t spatial = rank - 2;
  if (grid.dims()[0] != x.dims()[0] || grid.dims().back() != static_cast<int64_t>(spatial))
    ctx.fail("grid must be [N, ..., " + std::to_string(spatial) + "]");
  std::string mode = ctx.node().attrString("mode", "linear");
  if (mode == "bilinear") mode = "linear";  // opset 16's names
  if (mode == "bicubic") mode = "cubic";
  if (mode != "linear" && mode != "nearest" && mode != "cubic") ctx.fail("mode '" + mode + "' is not linear, nearest or cubic");
  if (mode == "cubic" && spatial != 2) return {};  // ONNX defines cubic for 2-D grids only
  const std::string padding = ctx.node().attrString("padding_mode", "zeros");
  if (padding != "zeros" && padding != "border" && padding != "reflection")
    ctx.fail("padding_mode '" + padding + "' is not zeros, border or reflection");
  const bool align = ctx.node().attrInt("align_corners", 0) != 0;
  std::vector<Tensor> out;
  dispatch<kFloats>(x.dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    const std::vector<double> xv = nn::loadAll<S, double>(ctx, x);
    const std::vector<double> gv = grid.toDouble();
    const int64_t n = x.dims()[0], c = x.dims()[1];
    std::vector<int64_t> in(x.dims().begin() + 2, x.dims().end());
    std::vector<int64_t> dims{n, c};
    dims.insert(dims.end(), grid.dims().begin() + 1, grid.dims().end() - 1);
    const int64_t inPoints = *checkedProduct(in);
    const int64_t outPoints = *checkedProduct(std::vector<int64_t>(dims.begin() + 2, dims.end()));
    checkScratch(ctx, n * c * outPoints, sizeof(double));
    std::vector<double> y(static_cast<size_t>(n * c * outPoints));
    std::vector<double> pos(spatial);
    std::vector<int64_t> lowIdx(spatial);
    std::vector<double> frac(spatial);
    // The value at integer position idx (spatial, outermost first) of channel plane `plane`; 0 outside (zeros).
    auto at = [&](int64_t plane, const std::vector<int64_t>& idx) {
      int64_t off = 0;
      for (size_t a = 0; a < spatial; ++a) {
        int64_t i = idx[a];
        if (padding != "zeros") i = std::clamp<int64_t>(i, 0, in[a] - 1);
        if (i < 0 || i >= in[a]) return 0.0;
        off = off * in[a] + i;
      }
      return xv[static_cast<size_t>(plane * inPoints + off)];
    };
    // A cubic tap at integer (y, x): read as the padding mode says (zeros outside, the edge, or reflected).
    auto tapAt = [&](int64_t plane, int64_t yy, int64_t xx, int64_t hgt, int64_t wid) {
      auto fix = [&](int64_t i, int64_t size) -> int64_t {
        if (padding == "border") return std::clamp<int64_t>(i, 0, size - 1);
        if (padding == "reflection") {
          const double r = align ? reflect(static_cast<double>(i), 0, static_cast<double>(size - 1))
                                 : reflect(static_cast<double>(i), -0.5, static_cast<double>(size) - 0.5);
          return std::clamp<int64_t>(std::llround(r), 0, size - 1);  // integer taps reflect onto integers
        }
        return i;
      };
      const int64_t y2 = fix(yy, hgt), x2 = fix(xx, wid);
      if (y2 < 0 || y2 >= hgt || x2 < 0 || x2 >= wid) return 0.0;
      return xv[static_cast<size_t>(plane * inPoints + y2 * wid + x2)];
    };
    std::vector<int64_t> idx(spatial);
    for (int64_t b = 0; b < n; ++b)
      for (int64_t k = 0; k < outPoints; ++k) {
        for (size_t a = 0; a < spatial; ++a) {
          // grid's last axis is (x, y, z): innermost axis first.
          const double g = gv[static_cast<size_t>((b * outPoints + k) * static_cast<int64_t>(spatial)) + (spatial - 1 - a)];
          double p = unnormalize(g, in[a], align);
          if (mode == "cubic") {  // its 16 taps are padded one by one below
            pos[a] = p;
            continue;
          }
          if (padding == "border") p = std::clamp(p, 0.0, static_cast<double>(in[a] - 1));
          else if (padding == "reflection")
            p = align ? reflect(p, 0, static_cast<double>(in[a] - 1))
                      : std::clamp(reflect(p, -0.5, static_cast<double>(in[a]) - 0.5), 0.0,
                                   static_cast<double>(in[a] - 1));
          pos[a] = p;
        }
        for (int64_t ch = 0; ch < c; ++ch) {
          const int64_t plane = b * c + ch;
          double v = 0;
          if (mode == "cubic") {
            v = cubicSample(pos[0], pos[1], [&](int64_t yy, int64_t xx) {
              return tapAt(plane, yy, xx, in[0], in[1]);
            });
          } else if (mode == "nearest") {
            for (size_t a = 0; a < spatial; ++a) idx[a] = static_cast<int64_t>(std::nearbyint(pos[a]));
            v = at(plane, idx);
          } else {
            for (size_t a = 0; a < spatial; ++a) {
              lowIdx[a] = static_cast<int64_t>(std::floor(pos[a]));
              frac[a] = pos[a] - static_cast<double>(lowIdx[a]);
            }
            for (uint32_t corner = 0; corner < (1u << spatial); ++corner) {
              double w = 1;
              for (size_t a = 0; a < spatial; ++a) {
                const bool high = (corner >> a) & 1u;
                idx[a] = lowIdx[a] + (high ? 1 : 0);
                w *= high ? frac[a] : 1 - frac[a];
              }
              if (w != 0) v += w * at(plane, idx);
            }
          }
          y[static_cast<size_t>(plane * outPoints + k)] = v;
        }
      }
    out.push_back(nn::storeAll<S>(ctx, dims, y));
  });
  return out;
}

// Col2Im: input [N, C·prod(block), L] -> [N, C, image...], each column's block added back at its window.
std::vector<Tensor> col2Im(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  const std::vector<int64_t> image = intValues(ctx, ctx.required(1), "image_shape");
  const std::vector<int64_t> block = intValues(ctx, ctx.required(2), "block_shape");
  const size_t nd = image.size();
  if (block.size() != nd || nd == 0) ctx.fail("image_shape and block_shape must have one extent per spatial axis");
  auto attr = [&](const char* name, int64_t fill, size_t count) {
    std::vector<int64_t> v = ctx.node().attrInts(name);
    if (v.empty()) v.assign(count, fill);
    if (v.size() != count) ctx.fail(std::string(name) + " has the wrong length");
    return v;
  };
  const auto dil = attr("dilations", 1, nd), strides = attr("strides", 1, nd), pads = attr("pads", 0, 2 * nd);
  int64_t blockElems = 1, columns = 1;
  std::vector<int64_t> perAxis(nd);
  for (size_t a = 0; a < nd; ++a) {
    if (block[a] < 1 || image[a] < 0 || dil[a] < 1 || strides[a] < 1) ctx.fail("extents, dilations and strides must be positive");
    blockElems *= block[a];
    const int64_t span = image[a] + pads[a] + pads[a + nd] - (dil[a] * (block[a] - 1) + 1);
    if (span < 0) ctx.fail("block larger than the padded image");
    perAxis[a] = span / strides[a] + 1;
    columns *= perAxis[a];
  }
  if (x.dims().size() != 3 || x.dims()[1] % blockElems != 0 || x.dims()[2] != columns)
    ctx.fail("input must be [N, C·" + std::to_string(blockElems) + ", " + std::to_string(columns) + "]");
  std::vector<Tensor> out;
  dispatch<kFloats>(x.dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    const std::vector<double> xv = nn::loadAll<S, double>(ctx, x);
    const int64_t n = x.dims()[0], c = x.dims()[1] / blockElems;
    const int64_t imageElems = *checkedProduct(image);
    std::vector<int64_t> dims{n, c};
    dims.insert(dims.end(), image.begin(), image.end());
    checkScratch(ctx, n * c * imageElems, sizeof(double));
    std::vector<double> y(static_cast<size_t>(n * c * imageElems), 0.0);
    for (int64_t b = 0; b < n; ++b)
      for (int64_t ch = 0; ch < c; ++ch)
        for (int64_t k = 0; k < blockElems; ++k)
          for (int64_t col = 0; col < columns; ++col) {
            int64_t kr = k, cr = col, off = 0;
            bool inside = true;
            std::vector<int64_t> pos(nd);
            for (size_t a = nd; a-- > 0;) {
              const int64_t ki = kr % block[a], ci = cr % perAxis[a];
              kr /= block[a];
              cr /= perAxis[a];
              pos[a] = ci * strides[a] - pads[a] + ki * dil[a];
              if (pos[a] < 0 || pos[a] >= image[a]) inside = false;
            }
            if (!inside) continue;
            for (size_t a = 0; a < nd; ++a) off = off * image[a] + pos[a];
            y[static_cast<size_t>((b * c + ch) * imageElems + off)] +=
                xv[static_cast<size_t>(((b * c + ch) * blockElems + k) * columns + col)];
          }
    out.push_back(nn::storeAll<S>(ctx, dims, y));
  });
  return out;
}

// CenterCropPad: each named axis cropped (start (D - T) / 2) or zero-padded (input placed at (T - D) / 2) to T.
std::vector<Tensor> centerCropPad(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  if (x.dtype() == DType::String || isPacked(x.dtype())) return {};
  const std::vector<int64_t> target = intValues(ctx, ctx.required(1), "shape");
  const auto rank = static_cast<int64_t>(x.dims().size());
  std::vector<int64_t> axes = ctx.node().attrInts("axes");
  if (axes.empty())
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  if (axes.size() != target.size()) ctx.fail("shape must have one extent per axis");
  std::vector<int64_t> dims = x.dims(), srcStart(dims.size(), 0), dstStart(dims.size(), 0), copy = x.dims();
  for (size_t i = 0; i < axes.size(); ++i) {
    const auto a = static_cast<size_t>(normalizeAxis(ctx, axes[i], rank, "axis"));
    if (target[i] < 0) ctx.fail("shape has a negative extent");
    const int64_t d = x.dims()[a], t = target[i];
    dims[a] = t;
    if (t < d) srcStart[a] = (d - t) / 2;
    else dstStart[a] = (t - d) / 2;
    copy[a] = std::min(d, t);
  }
  OutBuffer out(ctx, x.dtype(), dims);
  const auto esize = static_cast<size_t>(dtypeSize(x.dtype()));
  const auto srcStrides = stridesOf(x.dims()), dstStrides = stridesOf(dims);
  const std::optional<int64_t> count = checkedProduct(copy);
  for (int64_t k = 0; count && k < *count; ++k) {
    int64_t rest = k, src = 0, dst = 0;
    for (size_t a = copy.size(); a-- > 0;) {
      const int64_t i = rest % copy[a];
      rest /= copy[a];
      src += (i + srcStart[a]) * srcStrides[a];
      dst += (i + dstStart[a]) * dstStrides[a];
    }
    copyElement(out.data() + static_cast<size_t>(dst) * esize, x.data() + static_cast<size_t>(src) * esize, esize);
  }
  return {out.finish()};
}

}  // namespace

void registerSpatialTransformKernels(KernelRegistry& r) {
  r.add("AffineGrid", affineGrid);
  r.add("GridSample", gridSample);
  r.add("Col2Im", col2Im);
  r.add("CenterCropPad", centerCropPad);
}

}  // namespace kiln::kernels
