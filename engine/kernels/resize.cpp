// Resize (opset 10 to 19 forms) and its deprecated alias Upsample. Every axis is resampled on its own: an output
// position maps to a source coordinate (coordinate_transformation_mode), which picks taps (one for nearest, two for
// linear, four for cubic, more when antialiased) with weights. Nearest copies elements, so it takes every fixed-size
// type; linear and cubic interpolate in double, one axis after the other, and round once into the input's floating
// type.
//
// Separable passes give the same result as the multi-dimensional formulas because the weights of every output
// position sum to 1: an extrapolated (tf_crop_and_resize outside the crop) row stays the extrapolation value
// through the later passes. antialias (opset 18) widens the linear / cubic filter of a downscaled axis.
#include <algorithm>
#include <cmath>

#include "kernels/kernel_util.h"
#include "ir/graph.h"

namespace kiln::kernels {
namespace {

enum class Mode { Nearest, Linear, Cubic };

struct Settings {
  Mode mode = Mode::Nearest;
  std::string coordinates = "half_pixel";
  std::string nearest = "round_prefer_floor";
  double cubicA = -0.75;
  bool excludeOutside = false;
  double extrapolation = 0;
  bool antialias = false;
};

// One axis: for each output position, `taps` (index, weight) pairs, or extrapolate[o] when the position falls
// outside the crop.
struct AxisPlan {
  int64_t taps = 1;
  std::vector<int64_t> index;
  std::vector<double> weight;
  std::vector<uint8_t> extrapolate;
};

// `resized` is the output length before flooring (input length times scale when scales are given), as the spec's
// formulas use it; `out` the integer length.
double sourceCoordinate(const KernelContext& ctx, const Settings& s, double o, double scale, int64_t in, int64_t out,
                        double resized, double roiStart, double roiEnd) {
  const std::string& m = s.coordinates;
  if (m == "half_pixel") return (o + 0.5) / scale - 0.5;
  if (m == "pytorch_half_pixel") return resized > 1 ? (o + 0.5) / scale - 0.5 : 0.0;
  if (m == "align_corners") return resized > 1 ? o * double(in - 1) / (resized - 1) : 0.0;
  if (m == "asymmetric") return o / scale;
  if (m == "tf_half_pixel_for_nn") return (o + 0.5) / scale;
  if (m == "half_pixel_symmetric") {  // opset 19: half_pixel around the centre of the (rounded) output
    const double adjustment = double(out) / (scale * double(in));
    const double offset = double(in) / 2 * (1 - adjustment);
    return offset + (o + 0.5) / scale - 0.5;
  }
  if (m == "tf_crop_and_resize")
    return resized > 1 ? roiStart * double(in - 1) + o * (roiEnd - roiStart) * double(in - 1) / (resized - 1)
                       : 0.5 * (roiStart + roiEnd) * double(in - 1);
  ctx.fail("unknown coordinate_transformation_mode '" + m + "'");
}

int64_t roundNearest(const KernelContext& ctx, const std::string& mode, double x) {
  const double lo = std::floor(x);
  if (mode == "floor") return static_cast<int64_t>(lo);
  if (mode == "ceil") return static_cast<int64_t>(std::ceil(x));
  const bool tie = x - lo == 0.5;
  if (mode == "round_prefer_floor") return static_cast<int64_t>(tie ? lo : std::round(x));
  if (mode == "round_prefer_ceil") return static_cast<int64_t>(tie ? lo + 1 : std::round(x));
  ctx.fail("unknown nearest_mode '" + mode + "'");
}

// The interpolation filter at distance d (in input elements): the triangle for linear, Keys' cubic convolution with
// coefficient a for cubic. Both reach `support` elements to each side.
double filter(Mode mode, double a, double d) {
  d = std::fabs(d);
  if (mode == Mode::Linear) return std::max(0.0, 1 - d);
  if (d <= 1) return ((a + 2) * d - (a + 3)) * d * d + 1;
  if (d < 2) return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
  return 0;
}

AxisPlan planAxis(const KernelContext& ctx, const Settings& s, int64_t in, int64_t out, double resized, double scale,
                  double roiStart, double roiEnd) {
  AxisPlan p;
  // Antialiasing a downscaled axis stretches the filter by 1 / scale (so it averages every input element it covers);
  // taps at floor(x) + first .. floor(x) - first + 1.
  const double support = s.mode == Mode::Linear ? 1 : 2;
  const double stretch = s.antialias && scale < 1 && s.mode != Mode::Nearest ? scale : 1.0;
  if (!(support / stretch < 1e9))
    throw KernelOutputTooLarge(ctx.node().opType() + " '" + ctx.node().name() + "': antialias filter too wide",
                               INT64_MAX);
  const auto first = static_cast<int64_t>(std::floor(-support / stretch)) + 1;
  p.taps = s.mode == Mode::Nearest ? 1 : 2 - 2 * first;
  checkScratch(ctx, out * p.taps, 17);
  const auto n = static_cast<size_t>(out * p.taps);
  p.index.assign(n, 0);
  p.weight.assign(n, 0.0);
  p.extrapolate.assign(static_cast<size_t>(out), 0);
  const bool crop = s.coordinates == "tf_crop_and_resize";
  for (int64_t o = 0; o < out; ++o) {
    const double x = sourceCoordinate(ctx, s, double(o), scale, in, out, resized, roiStart, roiEnd);
    if (!std::isfinite(x) || (crop && (x < 0 || x > double(in - 1)))) {
      p.extrapolate[static_cast<size_t>(o)] = 1;
      continue;
    }
    int64_t* idx = p.index.data() + o * p.taps;
    double* w = p.weight.data() + o * p.taps;
    // Coordinates beyond the edges read the edge element (the spec pads with edge values).
    const double clamped = std::clamp(x, -2.0, double(in) + 1);
    if (s.mode == Mode::Nearest) {
      // Resize-10 had no nearest_mode; its tests (and onnxruntime) round down when upscaling, up when downscaling.
      const std::string rounding = s.nearest != "opset10" ? s.nearest : scale < 1 ? "ceil" : "floor";
      idx[0] = std::clamp<int64_t>(roundNearest(ctx, rounding, clamped), 0, in - 1);
      w[0] = 1;
      continue;
    }
    const double lo = std::floor(clamped);
    const double t = clamped - lo;
    double sum = 0;
    for (int64_t k = 0; k < p.taps; ++k) {
      const int64_t i = static_cast<int64_t>(lo) + first + k;
      w[k] = s.excludeOutside && (i < 0 || i >= in) ? 0.0 : filter(s.mode, s.cubicA, double(first + k - t) * stretch);
      idx[k] = std::clamp<int64_t>(i, 0, in - 1);
      sum += w[k];
    }
    // The plain filters sum to 1 by themselves; stretched or truncated ones are renormalised.
    if ((s.excludeOutside || stretch < 1) && sum != 0)
      for (int64_t k = 0; k < p.taps; ++k) w[k] /= sum;
  }
  return p;
}

// Whether the axis keeps every element where it is (scale 1 under most modes): its pass can be skipped.
bool identity(const AxisPlan& p, int64_t in) {
  if (static_cast<int64_t>(p.extrapolate.size()) != in) return false;
  for (int64_t o = 0; o < in; ++o) {
    if (p.extrapolate[static_cast<size_t>(o)]) return false;
    double self = 0;
    for (int64_t k = 0; k < p.taps; ++k) {
      const auto i = static_cast<size_t>(o * p.taps + k);
      if (p.index[i] == o)
        self += p.weight[i];
      else if (p.weight[i] != 0)
        return false;
    }
    if (self != 1.0) return false;
  }
  return true;
}

int64_t product(const std::vector<int64_t>& dims, size_t from, size_t to) {
  int64_t n = 1;
  for (size_t i = from; i < to; ++i) n *= dims[i];
  return n;
}

// Nearest: every output element is one input element (or the extrapolation value), copied as bytes.
void gatherNearest(OutBuffer& out, const Tensor& x, const std::vector<AxisPlan>& plans, double fill) {
  const size_t rank = x.dims().size();
  const int64_t size = dtypeSize(x.dtype());
  const std::vector<uint8_t> fillBytes = elementBytes(x.dtype(), fill);
  const std::vector<int64_t> strides = stridesOf(x.dims());
  std::vector<int64_t> pos(rank, 0);
  for (int64_t i = 0; i < out.numel(); ++i) {
    int64_t offset = 0;
    bool outside = false;
    for (size_t a = 0; a < rank; ++a) {
      const auto o = static_cast<size_t>(pos[a]);
      outside = outside || plans[a].extrapolate[o];
      offset += plans[a].index[o] * strides[a];
    }
    copyElement(out.data() + i * size, outside ? fillBytes.data() : x.data() + offset * size,
                static_cast<size_t>(size));
    for (size_t a = rank; a-- > 0;)
      if (++pos[a] < out.dims()[a])
        break;
      else
        pos[a] = 0;
  }
}

// Linear / cubic: one weighted pass per axis that changes, in double.
void interpolate(const KernelContext& ctx, OutBuffer& out, const Tensor& x, const std::vector<AxisPlan>& plans,
                 double fill) {
  std::vector<double> cur = x.toDouble();
  std::vector<int64_t> dims = x.dims();
  for (size_t a = 0; a < dims.size(); ++a) {
    const AxisPlan& p = plans[a];
    const int64_t in = dims[a];
    if (identity(p, in)) continue;
    const int64_t len = static_cast<int64_t>(p.extrapolate.size());
    const int64_t outer = product(dims, 0, a), inner = product(dims, a + 1, dims.size());
    checkScratch(ctx, outer * len * inner, 8);
    std::vector<double> next(static_cast<size_t>(outer * len * inner));
    for (int64_t b = 0; b < outer; ++b)
      for (int64_t o = 0; o < len; ++o) {
        double* dst = next.data() + (b * len + o) * inner;
        if (p.extrapolate[static_cast<size_t>(o)]) {
          std::fill(dst, dst + inner, fill);
          continue;
        }
        for (int64_t k = 0; k < p.taps; ++k) {
          const double w = p.weight[static_cast<size_t>(o * p.taps + k)];
          const double* src = cur.data() + (b * in + p.index[static_cast<size_t>(o * p.taps + k)]) * inner;
          for (int64_t j = 0; j < inner; ++j) dst[j] += w * src[j];
        }
      }
    cur.swap(next);
    dims[a] = len;
  }
  dispatch<kFloats>(x.dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    for (int64_t i = 0; i < out.numel(); ++i)
      Elem<S>::store(out.data(), i, static_cast<ComputeOf<S>>(cur[static_cast<size_t>(i)]));
  });
}

std::vector<double> floatValues(const KernelContext& ctx, const Tensor& t, const char* what) {
  if (!isFloating(t.dtype())) ctx.fail(std::string(what) + " must be a floating-point tensor");
  return t.toDouble();
}

int64_t outputExtent(const KernelContext& ctx, double v) {
  if (!(v < 9.0e18))
    throw KernelOutputTooLarge(ctx.node().opType() + " '" + ctx.node().name() + "': output size overflows", INT64_MAX);
  return static_cast<int64_t>(std::floor(v));
}

std::vector<Tensor> run(const KernelContext& ctx, const Settings& s, const Tensor& x, std::vector<double> scales,
                        std::vector<int64_t> sizes, std::vector<double> roi) {
  const size_t rank = x.dims().size();
  std::vector<int64_t> outDims(rank);
  std::vector<double> resized(rank);
  for (size_t a = 0; a < rank; ++a) {
    if (!sizes.empty()) {
      outDims[a] = sizes[a];
      resized[a] = double(sizes[a]);
      if (scales.empty()) scales.assign(rank, 0.0);
      if (scales[a] == 0) scales[a] = x.dims()[a] ? double(sizes[a]) / double(x.dims()[a]) : 1.0;
    } else {
      const double crop = s.coordinates == "tf_crop_and_resize" ? roi[rank + a] - roi[a] : 1.0;
      resized[a] = double(x.dims()[a]) * crop * scales[a];
      outDims[a] = outputExtent(ctx, resized[a]);
    }
  }
  OutBuffer out(ctx, x.dtype(), outDims);
  if (out.numel() == 0) return {out.finish()};
  std::vector<AxisPlan> plans;
  for (size_t a = 0; a < rank; ++a) {
    if (x.dims()[a] == 0) ctx.fail("cannot resize an empty axis to a non-empty one");
    plans.push_back(planAxis(ctx, s, x.dims()[a], outDims[a], resized[a], scales[a], roi[a], roi[rank + a]));
  }
  if (s.mode == Mode::Nearest)
    gatherNearest(out, x, plans, s.extrapolation);
  else
    interpolate(ctx, out, x, plans, s.extrapolation);
  return {out.finish()};
}

Mode parseMode(const KernelContext& ctx, const std::string& m) {
  if (m == "nearest") return Mode::Nearest;
  if (m == "linear" || m == "bilinear") return Mode::Linear;
  if (m == "cubic") return Mode::Cubic;
  ctx.fail("unknown mode '" + m + "'");
}

void checkScales(const KernelContext& ctx, const std::vector<double>& scales) {
  for (double v : scales)
    if (!(v > 0) || !std::isfinite(v)) ctx.fail("scales must be positive and finite");
}

// Scales / sizes / roi given for `axes` only (opset 18) spread over all axes; the rest keep scale 1 and roi [0, 1].
template <typename T>
std::vector<T> spread(const std::vector<T>& given, const std::vector<int64_t>& axes, size_t rank, T fill) {
  std::vector<T> all(rank, fill);
  for (size_t i = 0; i < axes.size(); ++i) all[static_cast<size_t>(axes[i])] = given[i];
  return all;
}

std::vector<Tensor> resize(const KernelContext& ctx) {
  const Node& node = ctx.node();
  const Tensor& x = ctx.required(0);
  const size_t rank = x.dims().size();
  Settings s;
  s.mode = parseMode(ctx, node.attrString("mode", "nearest"));
  if (s.mode != Mode::Nearest && !isFloating(x.dtype())) return {};
  const auto given = [&](size_t i) { return ctx.input(i) && ctx.input(i)->numel() > 0 ? ctx.input(i) : nullptr; };
  std::vector<double> scales, roi;
  std::vector<int64_t> sizes;
  if (ctx.numInputs() == 2) {  // opset 10: (X, scales), asymmetric coordinates
    s.coordinates = "asymmetric";
    s.nearest = "opset10";
    scales = floatValues(ctx, ctx.required(1), "scales");
  } else {
    s.coordinates = node.attrString("coordinate_transformation_mode", "half_pixel");
    s.nearest = node.attrString("nearest_mode", "round_prefer_floor");
    s.cubicA = node.attrFloat("cubic_coeff_a", -0.75f);
    s.excludeOutside = node.attrInt("exclude_outside", 0) != 0;
    s.extrapolation = node.attrFloat("extrapolation_value", 0.0f);
    if (given(2)) scales = floatValues(ctx, *given(2), "scales");
    if (given(3)) sizes = intValues(ctx, *given(3), "sizes");
    if (given(1) && s.coordinates == "tf_crop_and_resize") roi = floatValues(ctx, *given(1), "roi");
  }
  if (scales.empty() == sizes.empty()) ctx.fail("exactly one of scales and sizes must be given");
  std::vector<int64_t> axes = node.attrInts("axes");
  if (axes.empty()) {
    for (size_t a = 0; a < rank; ++a) axes.push_back(static_cast<int64_t>(a));
  } else {
    std::vector<bool> seen(rank, false);
    for (int64_t& a : axes) {
      a = normalizeAxis(ctx, a, static_cast<int64_t>(rank), "axis");
      if (seen[static_cast<size_t>(a)]) ctx.fail("axes repeat an axis");
      seen[static_cast<size_t>(a)] = true;
    }
  }
  const size_t n = axes.size();
  if (!scales.empty() && scales.size() != n) ctx.fail("scales must have one entry per axis");
  if (!sizes.empty() && sizes.size() != n) ctx.fail("sizes must have one entry per axis");
  if (!roi.empty() && roi.size() != 2 * n) ctx.fail("roi must have two entries per axis");
  for (double v : roi)
    if (!std::isfinite(v)) ctx.fail("roi must be finite");
  checkScales(ctx, scales);
  for (int64_t v : sizes)
    if (v < 0) ctx.fail("negative size");

  std::vector<double> allRoi(2 * rank);
  std::fill(allRoi.begin() + static_cast<std::ptrdiff_t>(rank), allRoi.end(), 1.0);
  for (size_t i = 0; i < n && !roi.empty(); ++i) {
    allRoi[static_cast<size_t>(axes[i])] = roi[i];
    allRoi[rank + static_cast<size_t>(axes[i])] = roi[n + i];
  }
  if (!sizes.empty()) {
    const std::string policy = node.attrString("keep_aspect_ratio_policy", "stretch");
    if (policy == "not_larger" || policy == "not_smaller") {
      // One scale for every listed axis: the largest that fits inside sizes, or the smallest that covers them.
      double common = policy == "not_larger" ? INFINITY : 0.0;
      for (size_t i = 0; i < n; ++i) {
        const int64_t in = x.dims()[static_cast<size_t>(axes[i])];
        if (in == 0) ctx.fail("keep_aspect_ratio_policy needs non-empty axes");
        const double r = double(sizes[i]) / double(in);
        common = policy == "not_larger" ? std::min(common, r) : std::max(common, r);
      }
      if (!(common > 0) || !std::isfinite(common)) ctx.fail("sizes give no usable aspect-preserving scale");
      for (size_t i = 0; i < n; ++i)
        sizes[i] = outputExtent(ctx, std::nearbyint(common * double(x.dims()[static_cast<size_t>(axes[i])])));
      std::vector<double> all(rank, 1.0);
      for (int64_t a : axes) all[static_cast<size_t>(a)] = common;
      scales = all;
    } else if (policy != "stretch") {
      ctx.fail("unknown keep_aspect_ratio_policy '" + policy + "'");
    }
    std::vector<int64_t> allSizes = x.dims();
    for (size_t i = 0; i < n; ++i) allSizes[static_cast<size_t>(axes[i])] = sizes[i];
    sizes = allSizes;
  } else {
    scales = spread(scales, axes, rank, 1.0);
  }
  s.antialias = node.attrInt("antialias", 0) != 0;
  return run(ctx, s, x, scales, sizes, allRoi);
}

std::vector<Tensor> upsample(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  Settings s;
  s.mode = parseMode(ctx, ctx.node().attrString("mode", "nearest"));
  if (s.mode == Mode::Cubic) ctx.fail("Upsample has no cubic mode");
  if (s.mode != Mode::Nearest && !isFloating(x.dtype())) return {};
  s.coordinates = "asymmetric";
  s.nearest = "floor";
  std::vector<double> scales;
  if (ctx.input(1)) {  // opset 9
    scales = floatValues(ctx, *ctx.input(1), "scales");
  } else if (const Attribute* a = ctx.node().attr("scales"); a && a->get<std::vector<float>>()) {  // opset 7
    for (float v : *a->get<std::vector<float>>()) scales.push_back(v);
  } else {
    ctx.fail("scales is missing");
  }
  if (scales.size() != x.dims().size()) ctx.fail("scales must have one entry per axis");
  checkScales(ctx, scales);
  std::vector<double> roi(2 * scales.size(), 0.0);
  return run(ctx, s, x, scales, {}, roi);
}

}  // namespace

void registerResizeKernels(KernelRegistry& r) {
  r.add("Resize", resize);
  r.add("Upsample", upsample);
}

}  // namespace kiln::kernels
