// GE's NN ops as ONNX ops: convolution, matrix products, pooling, softmax, and the buffer-fused kernels GE builds
// around a convolution or a matrix product (ge_lowering.h says how their geometry is read off the file).
//   Conv2D / DepthwiseConv2D   strides, pads [top, bottom, left, right], dilations in data_format order, groups;
//                              inputs x, filter, bias, offset_w -> ONNX Conv (NCHW; NHWC / HWCN operands transposed)
//   MatMul / MatMulV2          transpose_x1 / transpose_x2 (or transpose_a / transpose_b), bias -> MatMul (+ Add)
//   BatchMatMul / BatchMatMulV2  adj_x1 / adj_x2 -> MatMul on the last two axes
//   FullyConnection            num_output, transpose, axis: x flattened from `axis` times the filter's rows
//   Pooling                    mode 0 max / 1 average, window, stride, pad [t, b, l, r], global_pooling,
//                              ceil_mode 0 = ceil (as ResNet-50's pool1 112 -> 56 with a 3x3 window at stride 2 shows)
//   MaxPool / AvgPool (V2, V3) ksize, strides in data_format order, padding SAME / VALID / CALCULATED with pads
//   SoftmaxV2 / LogSoftmaxV2   axes (one axis) -> Softmax / LogSoftmax (opset 13: that axis alone)
#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include "kernels/ge/ge_lowering_context.h"

namespace kiln::geops {
namespace {

bool isNhwc(const OpLowering& op, Format layout) {
  const std::string df = op.attrString("data_format");
  if (df == "NHWC") return true;
  if (df == "NCHW") return false;
  return layout == Format::NHWC;
}

// Spatial geometry of one axis: stride, padding before and after.
struct Axis {
  int64_t stride = 1, padBegin = 0, padEnd = 0, dilation = 1;
};

// The one stride and padding that turn `in` into `out` with a window of `k`, under the convention of the model's
// framework: TensorFlow (an NHWC origin) pads VALID or SAME (extra padding after); others pad symmetrically.
// Candidates that read the same input elements are one answer (padding no window reaches does not count).
std::optional<Axis> inferAxis(int64_t in, int64_t k, int64_t out, bool tensorflow) {
  std::set<std::tuple<int64_t, int64_t, int64_t>> found;  // (stride, pad before, pad after that a window reaches)
  auto consider = [&](int64_t s, int64_t pb, int64_t pe) {
    if (pb < 0 || pe < 0 || (in + pb + pe - k) < 0 || (in + pb + pe - k) / s + 1 != out) return;
    const int64_t reached = std::max<int64_t>(0, (out - 1) * s + k - in - pb);
    found.insert({s, pb, std::min(pe, reached)});
  };
  for (int64_t s = 1; s <= std::max(k, in); ++s) {
    if (tensorflow) {
      consider(s, 0, 0);  // VALID
      const int64_t sameOut = (in + s - 1) / s;
      const int64_t pad = std::max<int64_t>((sameOut - 1) * s + k - in, 0);
      consider(s, pad / 2, pad - pad / 2);  // SAME
    } else {
      for (int64_t p = 0; p < k; ++p) consider(s, p, p);
    }
  }
  if (found.size() != 1) return std::nullopt;
  const auto& [s, pb, pe] = *found.begin();
  return Axis{s, pb, pe, 1};
}

// The element-wise ops a fused kernel applies after its head, on the head's result.
Value* applyPostOps(OpLowering& op, Value* y, const std::vector<std::string>& post, std::vector<Value*> extra,
                    DType type) {
  for (const std::string& p : post) {
    if (p == "relu") y = op.add("Relu", {y});
    else if (p == "relu6") y = op.add("Clip", {y, op.scalar(0, type), op.scalar(6, type)});
    else if (p == "sigmoid") y = op.add("Sigmoid", {y});
    else if (p == "tanh") y = op.add("Tanh", {y});
    else if (p == "add" || p == "eltwise") {
      if (extra.empty()) op.fail("the fused kernel adds an operand the op does not have");
      y = op.add("Add", {y, extra.front()});
      extra.erase(extra.begin());
    } else {
      op.fail("its fused kernel applies '" + p + "' after the head op, whose parameters the file does not keep");
    }
  }
  if (!extra.empty()) op.fail("the op has operands its fused kernel's name does not account for");
  return y;
}

// The ops of a fused kernel after its head (whose own name is `head`), or {} for a plain op.
std::vector<std::string> postOps(const OpLowering& op, const std::set<std::string>& heads) {
  std::vector<std::string> ops = op.fusedKernelOps();
  if (ops.empty()) return {};
  if (!heads.count(ops.front())) op.fail("its fused kernel starts with '" + ops.front() + "', not this op's computation");
  ops.erase(ops.begin());
  return ops;
}

void conv2d(OpLowering& op) {
  const Format xl = op.inputLayout(0);
  const bool nhwc = isNhwc(op, xl);
  Value* x = op.relayout(op.required(0), xl == Format::ND ? (nhwc ? Format::NHWC : Format::NCHW) : xl, Format::NCHW);
  std::vector<int64_t> xd = op.inputDims(0), wd = op.inputDims(1);
  if (xd.size() != 4 || wd.size() != 4) op.fail("only 2-D convolutions (4-D operands) run here");
  if (nhwc) xd = {xd[0], xd[3], xd[1], xd[2]};
  Format wl = op.inputLayout(1);
  if (wl == Format::ND) wl = nhwc ? Format::HWCN : Format::NCHW;
  Value* w = op.relayout(op.required(1), wl, Format::NCHW);
  if (wl == Format::HWCN) wd = {wd[3], wd[2], wd[0], wd[1]};
  else if (wl == Format::NHWC) op.fail("an NHWC filter is not a layout GE gives a convolution's weights");
  std::vector<int64_t> yd = op.outputDims(0);
  if (yd.size() != 4) op.fail("its output is not 4-D");
  const bool yNhwc = op.outputLayout(0) == Format::NHWC || (op.outputLayout(0) == Format::ND && nhwc);
  if (yNhwc) yd = {yd[0], yd[3], yd[1], yd[2]};
  const int64_t groups = op.attrInt("groups", op.ge().opType() == "DepthwiseConv2D" ? xd[1] : 1);
  if (groups <= 0 || wd[1] * groups != xd[1]) op.fail("its filter's channels do not divide its input's");
  Axis h, wAxis;
  if (op.has("strides")) {
    const auto strides = op.attrInts("strides"), pads = op.attrInts("pads");
    auto dil = op.attrInts("dilations");
    if (strides.size() != 4 || (!pads.empty() && pads.size() != 4)) op.fail("strides / pads are not 4 values");
    if (dil.size() != 4) dil = {1, 1, 1, 1};
    const size_t hi = nhwc ? 1 : 2, wi = nhwc ? 2 : 3;
    h = {strides[hi], pads.empty() ? 0 : pads[0], pads.empty() ? 0 : pads[1], dil[hi]};
    wAxis = {strides[wi], pads.empty() ? 0 : pads[2], pads.empty() ? 0 : pads[3], dil[wi]};
    if (op.attrString("padding") == "SAME") {  // TensorFlow's SAME where GE kept the padding mode instead of pads
      auto same = [](int64_t in, int64_t k, Axis a) {
        const int64_t out = (in + a.stride - 1) / a.stride, pad = std::max<int64_t>((out - 1) * a.stride + (k - 1) * a.dilation + 1 - in, 0);
        a.padBegin = pad / 2;
        a.padEnd = pad - pad / 2;
        return a;
      };
      h = same(xd[2], wd[2], h);
      wAxis = same(xd[3], wd[3], wAxis);
    }
  } else {
    // A buffer-fused convolution: the file keeps no geometry; the shapes give it, when they give one answer.
    auto ih = inferAxis(xd[2], wd[2], yd[2], nhwc), iw = inferAxis(xd[3], wd[3], yd[3], nhwc);
    if (!ih || !iw)
      op.fail("the file keeps no strides or pads for this fused convolution, and its shapes (" +
              std::to_string(xd[2]) + "x" + std::to_string(xd[3]) + " -> " + std::to_string(yd[2]) + "x" +
              std::to_string(yd[3]) + " with a " + std::to_string(wd[2]) + "x" + std::to_string(wd[3]) +
              " window) fit more than one");
    h = *ih;
    wAxis = *iw;
    op.note("stride " + std::to_string(h.stride) + "x" + std::to_string(wAxis.stride) + ", padding [" +
            std::to_string(h.padBegin) + "," + std::to_string(h.padEnd) + "," + std::to_string(wAxis.padBegin) + "," +
            std::to_string(wAxis.padEnd) + "] read off the shapes (" + (nhwc ? "TensorFlow's SAME/VALID" : "symmetric padding") +
            " assumed)");
  }
  std::vector<Value*> ins = {x, w};
  std::vector<Value*> extra;
  size_t next = 2;
  if (op.ge().input(2) && op.isConstant(2) && op.inputDims(2).size() == 1) {
    ins.push_back(op.required(2));
    next = 3;
  }
  if (op.ge().input(next) && op.isConstant(next)) ++next;  // offset_w (int8)
  for (size_t i = next; i < op.numInputs(); ++i)
    if (Value* v = op.input(i)) extra.push_back(op.relayout(v, op.inputLayout(i) == Format::ND ? Format::NCHW : op.inputLayout(i), Format::NCHW));
  Value* y = op.add("Conv", ins,
                    {intsAttr("strides", {h.stride, wAxis.stride}),
                     intsAttr("pads", {h.padBegin, wAxis.padBegin, h.padEnd, wAxis.padEnd}),
                     intsAttr("dilations", {h.dilation, wAxis.dilation}), intAttr("group", groups)});
  y = applyPostOps(op, y, postOps(op, {"conv2d", "depthwise_conv2d"}), extra, op.outputType(0));
  op.result(0, op.relayout(y, Format::NCHW, yNhwc ? Format::NHWC : Format::NCHW));
}

// x1 @ x2 (+ bias) with GE's transpose flags, or — for a fused kernel that kept none — the one pair of flags the
// shapes allow.
void matMul(OpLowering& op) {
  const std::vector<int64_t> a = op.inputDims(0), b = op.inputDims(1), y = op.outputDims(0);
  const bool batched = op.ge().opType().starts_with("BatchMatMul");
  if (a.size() < 2 || b.size() < 2 || y.size() < 2) op.fail("its operands are not matrices");
  const bool kept = op.has("transpose_x1") || op.has("transpose_a") || op.has("adj_x1") || op.has("adj_x2") ||
                    op.has("transpose_x2") || op.has("transpose_b");
  bool ta = op.attrInt("transpose_x1", op.attrInt("transpose_a", op.attrInt("adj_x1", 0))) != 0;
  bool tb = op.attrInt("transpose_x2", op.attrInt("transpose_b", op.attrInt("adj_x2", 0))) != 0;
  const int64_t m = y[y.size() - 2], n = y[y.size() - 1];
  if (!kept) {
    std::vector<std::pair<bool, bool>> fit;
    for (bool x1 : {false, true})
      for (bool x2 : {false, true}) {
        const int64_t am = x1 ? a[a.size() - 1] : a[a.size() - 2], ak = x1 ? a[a.size() - 2] : a[a.size() - 1];
        const int64_t bk = x2 ? b[b.size() - 1] : b[b.size() - 2], bn = x2 ? b[b.size() - 2] : b[b.size() - 1];
        if (am == m && bn == n && ak == bk) fit.emplace_back(x1, x2);
      }
    if (fit.size() != 1) op.fail("the file keeps no transpose flags for this fused matrix product, and its shapes fit " +
                                 std::to_string(fit.size()) + " of the four");
    std::tie(ta, tb) = fit.front();
    op.note(std::string("transposes (") + (ta ? "x1ᵀ" : "x1") + ", " + (tb ? "x2ᵀ" : "x2") + ") read off the shapes");
  }
  auto lastTwoSwapped = [&](Value* v, size_t rank) {
    std::vector<int64_t> perm(rank);
    for (size_t i = 0; i < rank; ++i) perm[i] = int64_t(i);
    std::swap(perm[rank - 1], perm[rank - 2]);
    return op.transpose(v, perm);
  };
  Value* x1 = op.required(0);
  Value* x2 = op.required(1);
  if (ta) x1 = lastTwoSwapped(x1, a.size());
  if (tb) x2 = lastTwoSwapped(x2, b.size());
  Value* out = op.add("MatMul", {x1, x2});
  std::vector<Value*> extra;
  size_t i = 2;
  if (!batched || op.ge().input(2)) {
    if (op.ge().input(2) && op.isConstant(2) && op.inputDims(2).size() <= 2) {
      out = op.add("Add", {out, op.reshape(op.required(2), {op.inputDims(2).back()})});
      i = 3;
    }
  }
  if (op.ge().input(i) && op.isConstant(i)) ++i;  // offset_w
  for (; i < op.numInputs(); ++i)
    if (Value* v = op.input(i)) extra.push_back(v);
  out = applyPostOps(op, out, postOps(op, {"matmul", "matmulv2", "batch_matmul"}), extra, op.outputType(0));
  op.result(0, op.reshape(out, y));
}

// Caffe's InnerProduct: y[N, num_output] = flatten(x, axis) @ Wᵀ + b, stored at the output's own extents.
void fullyConnection(OpLowering& op) {
  const std::vector<int64_t> xd = op.inputDims(0), wd = op.inputDims(1), y = op.outputDims(0);
  const int64_t axis = op.attrInt("axis", 1);
  if (axis < 1 || axis >= int64_t(xd.size())) op.fail("axis " + std::to_string(axis) + " is outside its input");
  int64_t outer = 1, k = 1, wk = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= xd[size_t(i)];
  for (size_t i = size_t(axis); i < xd.size(); ++i) k *= xd[i];
  for (size_t i = 1; i < wd.size(); ++i) wk *= wd[i];
  const bool transpose = op.attrInt("transpose", 0) != 0;
  const int64_t rows = transpose ? wk : wd[0], cols = transpose ? wd[0] : wk;  // W as [num_output, K]
  if (cols != k) op.fail("its filter holds " + std::to_string(cols) + " inputs per output, its input " + std::to_string(k));
  Value* x = op.reshape(op.required(0), {outer, k});
  Value* w = op.reshape(op.required(1), transpose ? std::vector<int64_t>{k, rows} : std::vector<int64_t>{rows, k});
  std::vector<Value*> ins = {x, w};
  if (op.input(2)) ins.push_back(op.reshape(op.input(2), {rows}));
  Value* out = op.add("Gemm", ins, {intAttr("transB", transpose ? 0 : 1)});
  op.result(0, op.reshape(out, y));
}

// Caffe's Pooling as GE keeps it, and TensorFlow's MaxPool / AvgPool.
void pooling(OpLowering& op) {
  const Format xl = op.inputLayout(0);
  const bool nhwc = isNhwc(op, xl);
  std::vector<int64_t> xd = op.inputDims(0), yd = op.outputDims(0);
  if (xd.size() != 4 || yd.size() != 4) op.fail("only 2-D pooling (4-D operands) runs here");
  if (nhwc) {
    xd = {xd[0], xd[3], xd[1], xd[2]};
    yd = {yd[0], yd[3], yd[1], yd[2]};
  }
  Value* x = op.relayout(op.required(0), nhwc ? Format::NHWC : Format::NCHW, Format::NCHW);
  const std::string type = op.ge().opType();
  bool max = true, global = false, ceil = false, countPad = true;
  std::vector<int64_t> window, stride, pads;  // window/stride [h, w], pads [t, b, l, r]
  if (type == "Pooling") {
    max = op.attrInt("mode", 0) == 0;
    global = op.attrInt("global_pooling", 0) != 0;
    window = op.attrInts("window");
    stride = op.attrInts("stride");
    pads = op.attrInts("pad");
    ceil = op.attrInt("ceil_mode", 0) == 0;
  } else {
    max = type.starts_with("MaxPool");
    const auto ksize = op.attrInts("ksize"), strides = op.attrInts("strides");
    if (ksize.size() != 4 || strides.size() != 4) op.fail("ksize / strides are not 4 values");
    const size_t hi = nhwc ? 1 : 2, wi = nhwc ? 2 : 3;
    window = {ksize[hi], ksize[wi]};
    stride = {strides[hi], strides[wi]};
    const std::string padding = op.attrString("padding", "VALID");
    if (padding == "SAME") {
      pads.clear();
      for (int a = 0; a < 2; ++a) {
        const int64_t in = xd[size_t(2 + a)], out = (in + stride[size_t(a)] - 1) / stride[size_t(a)];
        const int64_t p = std::max<int64_t>((out - 1) * stride[size_t(a)] + window[size_t(a)] - in, 0);
        pads.push_back(p / 2);
        pads.push_back(p - p / 2);
      }
    } else if (padding == "CALCULATED") {
      pads = op.attrInts("pads");
    }
    ceil = op.attrInt("ceil_mode", 0) != 0;
    global = op.attrInt("global_pooling", 0) != 0;
    countPad = op.attrInt("exclusive", 1) == 0;  // AvgPoolV2: exclusive = padding not counted
    if (!max && padding == "SAME") countPad = false;  // TensorFlow averages over the elements inside only
  }
  if (global) {
    window = {xd[2], xd[3]};
    stride = {1, 1};
    pads = {0, 0, 0, 0};
  }
  if (window.size() != 2 || stride.size() != 2) op.fail("window / stride are not 2 values");
  if (pads.empty()) pads = {0, 0, 0, 0};
  if (pads.size() != 4) op.fail("pad is not 4 values");
  std::vector<NamedAttribute> attrs = {intsAttr("kernel_shape", window), intsAttr("strides", stride),
                                       intsAttr("pads", {pads[0], pads[2], pads[1], pads[3]}),
                                       intAttr("ceil_mode", ceil ? 1 : 0)};
  if (!max) attrs.push_back(intAttr("count_include_pad", countPad ? 1 : 0));
  Value* y = op.add(max ? "MaxPool" : "AveragePool", {x}, std::move(attrs));
  op.result(0, op.relayout(y, Format::NCHW, nhwc ? Format::NHWC : Format::NCHW));
}

void softmax(OpLowering& op) {
  std::vector<int64_t> axes = op.attrInts("axes");
  if (axes.empty()) axes = {op.attrInt("axis", -1)};
  if (axes.size() != 1) op.fail("softmax over " + std::to_string(axes.size()) + " axes at once does not run here");
  const bool log = op.ge().opType().starts_with("LogSoftmax");
  op.result(0, op.add(log ? "LogSoftmax" : "Softmax", {op.required(0)}, {intAttr("axis", axes[0])}));
}

}  // namespace

void addNnLowerings(LoweringTable& t) {
  t["Conv2D"] = conv2d;
  t["DepthwiseConv2D"] = conv2d;
  t["MatMul"] = matMul;
  t["MatMulV2"] = matMul;
  t["BatchMatMul"] = matMul;
  t["BatchMatMulV2"] = matMul;
  t["FullyConnection"] = fullyConnection;
  t["Pooling"] = pooling;
  t["MaxPool"] = pooling;
  t["MaxPoolV3"] = pooling;
  t["AvgPool"] = pooling;
  t["AvgPoolV2"] = pooling;
  t["SoftmaxV2"] = softmax;
  t["LogSoftmaxV2"] = softmax;
}

}  // namespace kiln::geops
