// DeformConv-19 (2-D): a convolution whose taps are moved by learned offsets and optionally scaled by a mask.
// X [N, C, H, W], W [oC, C/group, kH, kW], offset [N, offset_group·2·kH·kW, oH, oW] holding (dh, dw) per tap,
// B [oC], mask [N, offset_group·kH·kW, oH, oW]. A tap samples X bilinearly at
// (oh·sh − ph + kh·dh + Δh, ow·sw − pw + kw·dw + Δw), corners outside the image reading 0. In double.
#include <cmath>

#include "ir/graph.h"
#include "kernels/kernel_util.h"
#include "kernels/nn_kernels.h"

namespace kiln::kernels {
namespace {

std::vector<Tensor> deformConv(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  const Tensor& w = ctx.required(1);
  const Tensor& offset = ctx.required(2);
  const Tensor* bias = ctx.input(3);
  const Tensor* mask = ctx.input(4);
  if (x.dims().size() != 4 || w.dims().size() != 4) return {};  // 2-D only
  const Node& node = ctx.node();
  const int64_t n = x.dims()[0], c = x.dims()[1], h = x.dims()[2], wd = x.dims()[3];
  const int64_t oc = w.dims()[0], kh = w.dims()[2], kw = w.dims()[3];
  const int64_t group = node.attrInt("group", 1), offGroup = node.attrInt("offset_group", 1);
  if (group < 1 || c % group != 0 || oc % group != 0 || w.dims()[1] != c / group)
    ctx.fail("W must be [oC, C / group, kH, kW] with group dividing C and oC");
  if (offGroup < 1 || c % offGroup != 0) ctx.fail("offset_group must divide C");
  auto attr = [&](const char* name, int64_t fill, size_t count) {
    std::vector<int64_t> v = node.attrInts(name);
    if (v.empty()) v.assign(count, fill);
    if (v.size() != count) ctx.fail(std::string(name) + " has the wrong length");
    return v;
  };
  const auto strides = attr("strides", 1, 2), dil = attr("dilations", 1, 2), pads = attr("pads", 0, 4);
  if (strides[0] < 1 || strides[1] < 1 || dil[0] < 1 || dil[1] < 1) ctx.fail("strides and dilations must be positive");
  const int64_t oh = (h + pads[0] + pads[2] - dil[0] * (kh - 1) - 1) / strides[0] + 1;
  const int64_t ow = (wd + pads[1] + pads[3] - dil[1] * (kw - 1) - 1) / strides[1] + 1;
  if (oh < 1 || ow < 1) ctx.fail("kernel larger than the padded input");
  if (offset.dims() != std::vector<int64_t>{n, offGroup * 2 * kh * kw, oh, ow})
    ctx.fail("offset must be [N, offset_group·2·kH·kW, oH, oW]");
  if (mask && mask->dims() != std::vector<int64_t>{n, offGroup * kh * kw, oh, ow})
    ctx.fail("mask must be [N, offset_group·kH·kW, oH, oW]");
  if (bias && bias->numel() != oc) ctx.fail("B must hold one value per output channel");
  std::vector<Tensor> out;
  dispatch<kFloats>(x.dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    const std::vector<double> xv = nn::loadAll<S, double>(ctx, x);
    const std::vector<double> wv = w.toDouble(), ov = offset.toDouble();
    const std::vector<double> mv = mask ? mask->toDouble() : std::vector<double>{};
    const std::vector<double> bv = bias ? bias->toDouble() : std::vector<double>{};
    checkScratch(ctx, n * oc * oh * ow, sizeof(double));
    std::vector<double> y(static_cast<size_t>(n * oc * oh * ow), 0.0);
    const int64_t cPerGroup = c / group, ocPerGroup = oc / group, cPerOffGroup = c / offGroup;
    auto sample = [&](int64_t b, int64_t ch, double py, double px) {
      if (py <= -1 || py >= static_cast<double>(h) || px <= -1 || px >= static_cast<double>(wd)) return 0.0;
      const int64_t y0 = static_cast<int64_t>(std::floor(py)), x0 = static_cast<int64_t>(std::floor(px));
      const double fy = py - static_cast<double>(y0), fx = px - static_cast<double>(x0);
      double v = 0;
      for (int dy = 0; dy < 2; ++dy)
        for (int dx = 0; dx < 2; ++dx) {
          const int64_t yy = y0 + dy, xx = x0 + dx;
          if (yy < 0 || yy >= h || xx < 0 || xx >= wd) continue;
          v += (dy ? fy : 1 - fy) * (dx ? fx : 1 - fx) * xv[static_cast<size_t>(((b * c + ch) * h + yy) * wd + xx)];
        }
      return v;
    };
    for (int64_t b = 0; b < n; ++b)
      for (int64_t o = 0; o < oc; ++o) {
        const int64_t g = o / ocPerGroup;
        for (int64_t i = 0; i < oh; ++i)
          for (int64_t j = 0; j < ow; ++j) {
            double acc = bias ? bv[static_cast<size_t>(o)] : 0.0;
            for (int64_t ci = 0; ci < cPerGroup; ++ci) {
              const int64_t ch = g * cPerGroup + ci, og = ch / cPerOffGroup;
              for (int64_t a = 0; a < kh; ++a)
                for (int64_t e = 0; e < kw; ++e) {
                  const int64_t tap = a * kw + e;
                  const auto offAt = [&](int64_t k) {
                    return ov[static_cast<size_t>(((b * offGroup * 2 * kh * kw + og * 2 * kh * kw + 2 * tap + k) * oh + i) * ow + j)];
                  };
                  const double py = static_cast<double>(i * strides[0] - pads[0] + a * dil[0]) + offAt(0);
                  const double px = static_cast<double>(j * strides[1] - pads[1] + e * dil[1]) + offAt(1);
                  double v = sample(b, ch, py, px);
                  if (mask) v *= mv[static_cast<size_t>(((b * offGroup * kh * kw + og * kh * kw + tap) * oh + i) * ow + j)];
                  acc += v * wv[static_cast<size_t>(((o * cPerGroup + ci) * kh + a) * kw + e)];
                }
            }
            y[static_cast<size_t>(((b * oc + o) * oh + i) * ow + j)] = acc;
          }
      }
    out.push_back(nn::storeAll<S>(ctx, {n, oc, oh, ow}, y));
  });
  return out;
}

}  // namespace

void registerDeformConvKernels(KernelRegistry& r) { r.add("DeformConv", deformConv); }

}  // namespace kiln::kernels
