// NonMaxSuppression: greedy per batch and class. Boxes scoring above score_threshold are visited by descending score
// (ties: lower box index first); each is kept unless its IoU with an already kept box exceeds iou_threshold, until
// max_output_boxes_per_class are kept. Output [count, 3] int64 rows (batch, class, box) in that order. float only.
#include <algorithm>
#include <numeric>

#include "emulator/kernels/kernel_util.h"
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

}  // namespace

void registerDetectionKernels(KernelRegistry& r) { r.add("NonMaxSuppression", nonMaxSuppression); }

}  // namespace kiln::kernels
