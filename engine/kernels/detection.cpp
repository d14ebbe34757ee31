// NonMaxSuppression: greedy per batch and class. Boxes scoring above score_threshold are visited by descending score
// (ties: lower box index first); each is kept unless its IoU with an already kept box exceeds iou_threshold, until
// max_output_boxes_per_class are kept. Output [count, 3] int64 rows (batch, class, box) in that order. float only.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "kernels/kernel_util.h"
#include "kernels/nn_kernels.h"
#include "ir/graph.h"

namespace kiln::kernels {
namespace {

struct Box {
  float y1, x1, y2, x2;  // y1 <= y2, x1 <= x2
};

Box boxAt(const Tensor& boxes, int64_t offset, bool centerPoint) {
  const auto at = [&](int64_t k) { return Elem<float>::load(boxes.data(), offset + k); };
  if (centerPoint) {  // [x_center, y_center, width, height]
    const float xc = at(0), yc = at(1), w = at(2), h = at(3);
    return {yc - h / 2, xc - w / 2, yc + h / 2, xc + w / 2};
  }
  const float a = at(0), b = at(1), c = at(2), d = at(3);  // [y1, x1, y2, x2], any diagonal
  return {std::min(a, c), std::min(b, d), std::max(a, c), std::max(b, d)};
}

// True when IoU(p, q) > threshold; boxes without area overlap nothing.
bool overlaps(const Box& p, const Box& q, float threshold) {
  const float areaP = (p.y2 - p.y1) * (p.x2 - p.x1), areaQ = (q.y2 - q.y1) * (q.x2 - q.x1);
  if (!(areaP > 0) || !(areaQ > 0)) return false;
  const float ih = std::min(p.y2, q.y2) - std::max(p.y1, q.y1), iw = std::min(p.x2, q.x2) - std::max(p.x1, q.x1);
  if (!(ih > 0) || !(iw > 0)) return false;
  const float inter = ih * iw;
  return inter / (areaP + areaQ - inter) > threshold;
}

float floatScalar(const KernelContext& ctx, const Tensor* t, float fallback, const char* what) {
  if (!t) return fallback;
  if (t->dtype() != DType::Float) ctx.fail(std::string(what) + " must be float");
  if (t->numel() != 1) ctx.fail(std::string(what) + " must hold one value");
  return Elem<float>::load(t->data(), 0);
}

std::vector<Tensor> nonMaxSuppression(const KernelContext& ctx) {
  const Tensor& boxes = ctx.required(0);
  const Tensor& scores = ctx.required(1);
  if (boxes.dtype() != DType::Float || scores.dtype() != DType::Float) return {};
  const auto& bd = boxes.dims();
  const auto& sd = scores.dims();
  if (bd.size() != 3 || bd[2] != 4) ctx.fail("boxes must be [batch, boxes, 4]");
  if (sd.size() != 3 || sd[0] != bd[0] || sd[2] != bd[1]) ctx.fail("scores must be [batch, classes, boxes]");
  const int64_t centerPoint = ctx.node().attrInt("center_point_box", 0);
  if (centerPoint != 0 && centerPoint != 1) ctx.fail("center_point_box must be 0 or 1");
  int64_t maxOut = 0;
  if (const Tensor* m = ctx.input(2)) {
    const std::vector<int64_t> v = intValues(ctx, *m, "max_output_boxes_per_class");
    if (v.size() != 1) ctx.fail("max_output_boxes_per_class must hold one value");
    maxOut = std::max<int64_t>(v[0], 0);
  }
  const float iouThreshold = floatScalar(ctx, ctx.input(3), 0.0f, "iou_threshold");
  const bool useScoreThreshold = ctx.input(4) != nullptr;
  const float scoreThreshold = floatScalar(ctx, ctx.input(4), 0.0f, "score_threshold");
  const int64_t batches = bd[0], classes = sd[1], n = bd[1];
  checkScratch(ctx, n, static_cast<int64_t>(sizeof(int64_t) + sizeof(Box)));
  std::vector<int64_t> selected;  // triples
  std::vector<int64_t> order;
  std::vector<Box> kept;
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t c = 0; c < classes; ++c) {
      if (maxOut == 0) break;
      const int64_t scoreBase = (b * classes + c) * n;
      const auto score = [&](int64_t i) { return Elem<float>::load(scores.data(), scoreBase + i); };
      order.clear();
      for (int64_t i = 0; i < n; ++i)
        if (!useScoreThreshold || score(i) > scoreThreshold) order.push_back(i);
      std::stable_sort(order.begin(), order.end(), [&](int64_t p, int64_t q) { return totalLess(score(q), score(p)); });
      kept.clear();
      int64_t count = 0;
      for (const int64_t i : order) {
        if (count >= maxOut) break;
        const Box box = boxAt(boxes, (b * n + i) * 4, centerPoint == 1);
        bool suppressed = false;
        for (const Box& k : kept)
          if (overlaps(box, k, iouThreshold)) {
            suppressed = true;
            break;
          }
        if (suppressed) continue;
        kept.push_back(box);
        checkScratch(ctx, static_cast<int64_t>(selected.size()) + 3, sizeof(int64_t));
        selected.insert(selected.end(), {b, c, i});
        ++count;
      }
    }
  OutBuffer out(ctx, DType::Int64, {static_cast<int64_t>(selected.size() / 3), 3});
  for (size_t i = 0; i < selected.size(); ++i) Elem<int64_t>::store(out.data(), static_cast<int64_t>(i), selected[i]);
  return {out.finish()};
}


// RoiAlign (float): bilinear samples on a grid per output bin, averaged ("avg") or the largest weighted corner term
// ("max", as the ONNX reference does). rois are [x1, y1, x2, y2]; output_half_pixel (opset 10 behaviour) keeps a
// minimum ROI extent of 1, half_pixel shifts coordinates by -0.5. Sample grids too large to walk are declined.
std::vector<Tensor> roiAlign(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  const Tensor& rois = ctx.required(1);
  const Tensor& batchIdx = ctx.required(2);
  if (x.dtype() != DType::Float || rois.dtype() != DType::Float) return {};
  const Node& node = ctx.node();
  const auto& xd = x.dims();
  if (xd.size() != 4) ctx.fail("X must be [N, C, H, W]");
  if (rois.dims().size() != 2 || rois.dims()[1] != 4) ctx.fail("rois must be [num_rois, 4]");
  const int64_t numRois = rois.dims()[0];
  const std::vector<int64_t> batches = intValues(ctx, batchIdx, "batch_indices");
  if (batchIdx.dims().size() != 1 || static_cast<int64_t>(batches.size()) != numRois)
    ctx.fail("batch_indices must be one per roi");
  const std::string mode = node.attrString("mode", "avg");
  if (mode != "avg" && mode != "max") ctx.fail("mode must be avg or max");
  const std::string ctm =
      node.attrString("coordinate_transformation_mode", ctx.limits().opset != 0 && ctx.limits().opset < 16
                                                            ? "output_half_pixel"
                                                            : "half_pixel");
  if (ctm != "half_pixel" && ctm != "output_half_pixel") ctx.fail("unknown coordinate_transformation_mode");
  const int64_t outH = node.attrInt("output_height", 1), outW = node.attrInt("output_width", 1);
  const int64_t sampling = node.attrInt("sampling_ratio", 0);
  const float spatialScale = node.attrFloat("spatial_scale", 1.0f);
  if (outH < 1 || outW < 1) ctx.fail("output_height and output_width must be positive");
  if (sampling < 0) ctx.fail("sampling_ratio must not be negative");
  const int64_t n = xd[0], channels = xd[1], h = xd[2], w = xd[3];
  for (const int64_t b : batches)
    if (b < 0 || b >= n) ctx.fail("batch index out of range");
  OutBuffer out(ctx, DType::Float, {numRois, channels, outH, outW});
  if (out.numel() == 0) return {out.finish()};
  const float offset = ctm == "half_pixel" ? 0.5f : 0.0f;
  constexpr double kMaxGrid = 1 << 16;
  const auto load = [&](int64_t plane, int64_t yy, int64_t xx) { return Elem<float>::load(x.data(), plane + yy * w + xx); };
  for (int64_t r = 0; r < numRois; ++r) {
    const auto roi = [&](int64_t k) { return Elem<float>::load(rois.data(), r * 4 + k); };
    const float x1 = roi(0) * spatialScale - offset, y1 = roi(1) * spatialScale - offset;
    float roiW = roi(2) * spatialScale - offset - x1, roiH = roi(3) * spatialScale - offset - y1;
    if (ctm == "output_half_pixel") {
      roiW = std::max(roiW, 1.0f);
      roiH = std::max(roiH, 1.0f);
    }
    if (!std::isfinite(x1) || !std::isfinite(y1) || !std::isfinite(roiW) || !std::isfinite(roiH)) return {};
    const float binH = roiH / static_cast<float>(outH), binW = roiW / static_cast<float>(outW);
    const double gh = sampling > 0 ? static_cast<double>(sampling) : std::ceil(static_cast<double>(roiH) / outH);
    const double gw = sampling > 0 ? static_cast<double>(sampling) : std::ceil(static_cast<double>(roiW) / outW);
    if (!(gh <= kMaxGrid) || !(gw <= kMaxGrid) || gh * gw * static_cast<double>(channels * outH * outW) > 4e9) return {};
    const int64_t gridH = std::max<int64_t>(static_cast<int64_t>(gh), 0), gridW = std::max<int64_t>(static_cast<int64_t>(gw), 0);
    const float count = static_cast<float>(std::max<int64_t>(gridH * gridW, 1));
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t plane = (batches[static_cast<size_t>(r)] * channels + c) * h * w;
      for (int64_t ph = 0; ph < outH; ++ph)
        for (int64_t pw = 0; pw < outW; ++pw) {
          float sum = 0, mx = std::numeric_limits<float>::lowest();
          for (int64_t iy = 0; iy < gridH; ++iy) {
            const float sy = y1 + static_cast<float>(ph) * binH +
                             (static_cast<float>(iy) + 0.5f) * binH / static_cast<float>(gridH);
            for (int64_t ix = 0; ix < gridW; ++ix) {
              const float sx = x1 + static_cast<float>(pw) * binW +
                               (static_cast<float>(ix) + 0.5f) * binW / static_cast<float>(gridW);
              float t1 = 0, t2 = 0, t3 = 0, t4 = 0;
              // Outside [-1, extent] (or NaN) a sample contributes 0.
              if (sy >= -1.0f && sy <= static_cast<float>(h) && sx >= -1.0f && sx <= static_cast<float>(w) && h > 0 &&
                  w > 0) {
                float yy = std::max(sy, 0.0f), xx = std::max(sx, 0.0f);
                int64_t yl = static_cast<int64_t>(yy), xl = static_cast<int64_t>(xx), yh, xh;
                if (yl >= h - 1) {
                  yl = yh = h - 1;
                  yy = static_cast<float>(yl);
                } else {
                  yh = yl + 1;
                }
                if (xl >= w - 1) {
                  xl = xh = w - 1;
                  xx = static_cast<float>(xl);
                } else {
                  xh = xl + 1;
                }
                const float ly = yy - static_cast<float>(yl), lx = xx - static_cast<float>(xl);
                const float hy = 1 - ly, hx = 1 - lx;
                t1 = hy * hx * load(plane, yl, xl);
                t2 = hy * lx * load(plane, yl, xh);
                t3 = ly * hx * load(plane, yh, xl);
                t4 = ly * lx * load(plane, yh, xh);
              }
              sum += t1 + t2 + t3 + t4;
              mx = std::max(mx, std::max(std::max(t1, t2), std::max(t3, t4)));
            }
          }
          const float v = mode == "avg" ? sum / count : (gridH * gridW == 0 ? 0.0f : mx);
          Elem<float>::store(out.data(), ((r * channels + c) * outH + ph) * outW + pw, v);
        }
    }
  }
  return {out.finish()};
}

// MaxRoiPool: each ROI (batch, x1, y1, x2, y2) scaled by spatial_scale and rounded to whole pixels, split into
// pooled_shape bins (floor / ceil of the fractional bin edges); a bin's maximum, or 0 for an empty bin.
std::vector<Tensor> maxRoiPool(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  const Tensor& rois = ctx.required(1);
  const std::vector<int64_t> pooled = ctx.node().attrInts("pooled_shape");
  if (x.dims().size() != 4 || pooled.size() != 2 || pooled[0] < 1 || pooled[1] < 1) ctx.fail("needs X [N, C, H, W] and a 2-D pooled_shape");
  if (rois.dims().size() != 2 || rois.dims()[1] != 5) ctx.fail("rois must be [num_rois, 5]");
  const double scale = ctx.node().attrFloat("spatial_scale", 1.0f);
  const int64_t n = x.dims()[0], c = x.dims()[1], h = x.dims()[2], w = x.dims()[3], count = rois.dims()[0];
  std::vector<Tensor> out;
  dispatch<kFloats>(x.dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    const std::vector<double> xv = nn::loadAll<S, double>(ctx, x);
    const std::vector<double> r = rois.toDouble();
    std::vector<double> y(static_cast<size_t>(count * c * pooled[0] * pooled[1]), 0.0);
    for (int64_t k = 0; k < count; ++k) {
      const auto b = static_cast<int64_t>(r[static_cast<size_t>(k * 5)]);
      if (b < 0 || b >= n) ctx.fail("roi batch index " + std::to_string(b) + " is out of range");
      auto px = [&](size_t i) { return static_cast<int64_t>(std::round(r[static_cast<size_t>(k * 5) + i] * scale)); };
      const int64_t x1 = px(1), y1 = px(2), x2 = px(3), y2 = px(4);
      const double binH = static_cast<double>(std::max<int64_t>(y2 - y1 + 1, 1)) / static_cast<double>(pooled[0]);
      const double binW = static_cast<double>(std::max<int64_t>(x2 - x1 + 1, 1)) / static_cast<double>(pooled[1]);
      for (int64_t ch = 0; ch < c; ++ch)
        for (int64_t i = 0; i < pooled[0]; ++i)
          for (int64_t j = 0; j < pooled[1]; ++j) {
            const int64_t hs = std::clamp<int64_t>(static_cast<int64_t>(std::floor(double(i) * binH)) + y1, 0, h);
            const int64_t he = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(double(i + 1) * binH)) + y1, 0, h);
            const int64_t ws = std::clamp<int64_t>(static_cast<int64_t>(std::floor(double(j) * binW)) + x1, 0, w);
            const int64_t we = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(double(j + 1) * binW)) + x1, 0, w);
            double best = 0;
            bool any = false;
            for (int64_t yy = hs; yy < he; ++yy)
              for (int64_t xx = ws; xx < we; ++xx) {
                const double v = xv[static_cast<size_t>(((b * c + ch) * h + yy) * w + xx)];
                best = any ? std::max(best, v) : v;
                any = true;
              }
            y[static_cast<size_t>(((k * c + ch) * pooled[0] + i) * pooled[1] + j)] = any ? best : 0.0;
          }
    }
    out.push_back(nn::storeAll<S>(ctx, {count, c, pooled[0], pooled[1]}, y));
  });
  return out;
}

}  // namespace

void registerDetectionKernels(KernelRegistry& r) {
  r.add("NonMaxSuppression", nonMaxSuppression);
  r.add("RoiAlign", roiAlign);
  r.add("MaxRoiPool", maxRoiPool);
}

}  // namespace kiln::kernels
