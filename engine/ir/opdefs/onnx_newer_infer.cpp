#include "ir/opdefs/onnx_newer_infer.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/opdefs/infer_util.h"
#include "ir/tensor.h"

namespace kiln::newer_onnx {
namespace {

[[noreturn]] void fail(const std::string& why) { throw std::runtime_error(why); }

void setOutput(Node& n, size_t i, ValueType t) {
  if (Value* o = n.output(i)) o->setType(std::move(t));
}

// The same rank as `s` with every extent unknown (or an unknown rank).
Shape unknownExtents(const Shape& s) {
  if (!s.rankKnown()) return Shape::unknownRank();
  return Shape(std::vector<Dim>(s.rank(), Dim::unknown()));
}

DType elementTypeAttr(const Node& n, const char* name, DType fallback) {
  const int64_t code = n.attrInt(name, 0);
  if (code == 0) return fallback;
  const auto t = dtypeFromOnnx(static_cast<int>(code));
  if (!t || *t == DType::Undefined) fail(std::string(name) + " " + std::to_string(code) + " is not an element type");
  return *t;
}

// Input 0's type in ND, for an op whose output keeps its rank: nullopt, with the output already set to it, when
// the rank is unknown (nothing more can be said).
std::optional<ValueType> ndTypeOfKnownRank(Node& n, size_t inputs) {
  requireIO(n, inputs);
  ValueType t = n.input(0)->type();
  t.format = Format::ND;
  if (t.shape.rankKnown()) return t;
  n.output(0)->setType(t);
  return std::nullopt;
}

// The `axes` attribute made non-negative, or every axis when it is absent (Resize-18, CenterCropPad-18).
std::vector<int64_t> axesAttrOrAll(const Node& n, size_t rank) {
  std::vector<int64_t> axes;
  for (int64_t a : n.attrInts("axes")) axes.push_back(normalizedAxis(a, rank, n.opType() + " axis"));
  if (axes.empty())
    for (size_t i = 0; i < rank; ++i) axes.push_back(static_cast<int64_t>(i));
  return axes;
}

Dim times(const Dim& d, double scale) {
  if (!d.isStatic()) return Dim::unknown();
  return Dim::fixed(static_cast<int64_t>(std::floor(static_cast<double>(d.value) * scale)));
}

}  // namespace

void sameAsInput(Node& n) {
  requireIO(n, 1);
  n.output(0)->setType(n.input(0)->type());
}

void boolOfInput(Node& n) {
  requireIO(n, 1);
  n.output(0)->setType(ValueType::tensor(DType::Bool, n.input(0)->type().shape));
}

void broadcastBinary(Node& n) {
  requireIO(n, 2);
  ValueType t = n.input(0)->type();
  if (n.input(1)->type().isTensor() && t.isTensor() && n.input(1)->type().dtype != t.dtype &&
      t.dtype != DType::Undefined && n.input(1)->type().dtype != DType::Undefined)
    fail(n.opType() + " inputs have types " + std::string(dtypeName(t.dtype)) + " and " +
         std::string(dtypeName(n.input(1)->type().dtype)));
  t.shape = broadcastShapes(t.shape, n.input(1)->type().shape);
  t.format = Format::ND;
  n.output(0)->setType(t);
}

void reduce(Node& n) {
  requireIO(n, 1);
  ValueType t = n.input(0)->type();
  const bool keep = n.attrInt("keepdims", 1) != 0;
  const bool noopWhenEmpty = n.attrInt("noop_with_empty_axes", 0) != 0;
  if (n.opType() == "ReduceLogSumExp" || n.opType() == "ReduceL2" || n.opType() == "ReduceLogSum") {
    // float results only; integer inputs keep their type (as ONNX says) — nothing to change
  }
  std::optional<std::vector<int64_t>> axes;
  if (!n.input(1)) axes = std::vector<int64_t>{};
  else axes = constantInts(n, 1);
  if (!t.shape.rankKnown()) {
    t.shape = Shape::unknownRank();
    n.output(0)->setType(t);
    return;
  }
  const size_t rank = t.shape.rank();
  if (!axes) {  // computed axes: with keepdims the rank stays, the extents are unknown
    t.shape = keep ? unknownExtents(t.shape) : Shape::unknownRank();
    n.output(0)->setType(t);
    return;
  }
  if (axes->empty() && noopWhenEmpty) {
    n.output(0)->setType(t);
    return;
  }
  std::vector<bool> reduced(rank, axes->empty());
  for (int64_t a : *axes) {
    const int64_t k = normalizedAxis(a, rank, n.opType() + " axis");
    if (reduced[static_cast<size_t>(k)] && !axes->empty()) fail(n.opType() + " axes repeat axis " + std::to_string(a));
    reduced[static_cast<size_t>(k)] = true;
  }
  std::vector<Dim> dims;
  for (size_t i = 0; i < rank; ++i) {
    if (!reduced[i]) dims.push_back(t.shape[i]);
    else if (keep) dims.push_back(Dim::fixed(1));
  }
  t.shape = Shape(std::move(dims));
  t.format = Format::ND;
  n.output(0)->setType(t);
}

void split(Node& n) {
  requireIO(n, 1);
  const ValueType x = n.input(0)->type();
  const size_t outputs = n.numOutputs();
  if (outputs == 0) fail("Split needs at least one output");
  std::vector<ValueType> outs(outputs, x);
  if (!x.shape.rankKnown()) {
    for (size_t i = 0; i < outputs; ++i) setOutput(n, i, x);
    return;
  }
  const size_t axis = static_cast<size_t>(normalizedAxis(n.attrInt("axis", 0), x.shape.rank(), "Split axis"));
  const Dim& d = x.shape[axis];
  std::vector<Dim> parts(outputs, Dim::unknown());
  const bool hasNum = n.attr("num_outputs") != nullptr;
  if (n.input(1)) {
    if (hasNum) fail("Split has both a split input and num_outputs");
    if (auto sizes = constantInts(n, 1)) {
      if (sizes->size() != outputs)
        fail("Split has " + std::to_string(outputs) + " outputs but " + std::to_string(sizes->size()) + " sizes");
      int64_t sum = 0;
      for (size_t i = 0; i < outputs; ++i) {
        if ((*sizes)[i] < 0) fail("Split size " + std::to_string((*sizes)[i]) + " is negative");
        sum += (*sizes)[i];
        parts[i] = Dim::fixed((*sizes)[i]);
      }
      if (d.isStatic() && sum != d.value)
        fail("Split sizes add up to " + std::to_string(sum) + ", not the axis extent " + std::to_string(d.value));
    }
  } else {
    const int64_t num = hasNum ? n.attrInt("num_outputs", 0) : static_cast<int64_t>(outputs);
    if (num < 1) fail("Split num_outputs must be positive");
    if (num != static_cast<int64_t>(outputs))
      fail("Split num_outputs is " + std::to_string(num) + " but the node has " + std::to_string(outputs) +
           " outputs");
    if (d.isStatic()) {
      // Opset 18: ceil(D / num) per output, the last one taking what is left.
      const int64_t chunk = hasNum ? (d.value + num - 1) / num : d.value / num;
      if (!hasNum && d.value % num != 0)
        fail("Split of extent " + std::to_string(d.value) + " into " + std::to_string(num) + " equal parts");
      for (int64_t i = 0; i < num; ++i)
        parts[static_cast<size_t>(i)] = Dim::fixed(std::max<int64_t>(0, std::min(chunk, d.value - i * chunk)));
    }
  }
  for (size_t i = 0; i < outputs; ++i) {
    outs[i].shape.dims()[axis] = parts[i];
    outs[i].format = Format::ND;
    setOutput(n, i, outs[i]);
  }
}

void pad(Node& n) {
  auto ranked = ndTypeOfKnownRank(n, 1);
  if (!ranked) return;
  ValueType t = std::move(*ranked);
  const size_t rank = t.shape.rank();
  std::vector<int64_t> axes;
  if (n.input(3)) {
    auto a = constantInts(n, 3);
    if (!a) {
      t.shape = unknownExtents(t.shape);
      n.output(0)->setType(t);
      return;
    }
    for (int64_t x : *a) axes.push_back(normalizedAxis(x, rank, "Pad axis"));
  } else {
    for (size_t i = 0; i < rank; ++i) axes.push_back(static_cast<int64_t>(i));
  }
  const auto pads = n.input(1) ? constantInts(n, 1) : std::nullopt;
  if (!pads) {
    for (int64_t a : axes) t.shape.dims()[static_cast<size_t>(a)] = Dim::unknown();
    n.output(0)->setType(t);
    return;
  }
  if (pads->size() != 2 * axes.size())
    fail("Pad has " + std::to_string(pads->size()) + " pads for " + std::to_string(axes.size()) + " axes");
  const std::string mode = n.attrString("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap")
    fail("Pad mode '" + mode + "' is not constant, reflect, edge or wrap");
  for (size_t i = 0; i < axes.size(); ++i) {
    Dim& d = t.shape.dims()[static_cast<size_t>(axes[i])];
    if (!d.isStatic()) {
      d = Dim::unknown();
      continue;
    }
    const int64_t extent = d.value + (*pads)[i] + (*pads)[i + axes.size()];
    if (extent < 0) fail("Pad leaves axis " + std::to_string(axes[i]) + " with a negative extent");
    d = Dim::fixed(extent);
  }
  n.output(0)->setType(t);
}

void resize(Node& n) {
  auto ranked = ndTypeOfKnownRank(n, 1);
  if (!ranked) return;
  ValueType t = std::move(*ranked);
  const std::vector<int64_t> axes = axesAttrOrAll(n, t.shape.rank());
  const std::string policy = n.attrString("keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
    fail("Resize keep_aspect_ratio_policy '" + policy + "' is not stretch, not_larger or not_smaller");
  if (n.input(3)) {  // sizes
    auto sizes = constantInts(n, 3);
    if (!sizes) {
      for (int64_t a : axes) t.shape.dims()[static_cast<size_t>(a)] = Dim::unknown();
    } else {
      if (sizes->size() != axes.size())
        fail("Resize has " + std::to_string(sizes->size()) + " sizes for " + std::to_string(axes.size()) + " axes");
      if (policy == "stretch") {
        for (size_t i = 0; i < axes.size(); ++i) {
          if ((*sizes)[i] < 0) fail("Resize size " + std::to_string((*sizes)[i]) + " is negative");
          t.shape.dims()[static_cast<size_t>(axes[i])] = Dim::fixed((*sizes)[i]);
        }
      } else {
        // One scale for all the axes: the smallest (not_larger) or largest (not_smaller) size / extent.
        double scale = policy == "not_larger" ? INFINITY : 0;
        bool known = true;
        for (size_t i = 0; i < axes.size(); ++i) {
          const Dim& d = t.shape[static_cast<size_t>(axes[i])];
          if (!d.isStatic() || d.value == 0) {
            known = false;
            break;
          }
          const double s = static_cast<double>((*sizes)[i]) / static_cast<double>(d.value);
          scale = policy == "not_larger" ? std::min(scale, s) : std::max(scale, s);
        }
        for (int64_t a : axes) {
          Dim& d = t.shape.dims()[static_cast<size_t>(a)];
          d = known ? Dim::fixed(static_cast<int64_t>(std::round(static_cast<double>(d.value) * scale)))
                    : Dim::unknown();
        }
      }
    }
  } else if (n.input(2)) {  // scales
    auto scales = constantReals(n, 2);
    if (!scales) {
      for (int64_t a : axes) t.shape.dims()[static_cast<size_t>(a)] = Dim::unknown();
    } else if (!scales->empty()) {
      if (scales->size() != axes.size())
        fail("Resize has " + std::to_string(scales->size()) + " scales for " + std::to_string(axes.size()) + " axes");
      for (size_t i = 0; i < axes.size(); ++i) {
        if (!((*scales)[i] > 0)) fail("Resize scale " + std::to_string((*scales)[i]) + " is not positive");
        Dim& d = t.shape.dims()[static_cast<size_t>(axes[i])];
        d = times(d, (*scales)[i]);
      }
    }
  } else {
    fail("Resize needs scales or sizes");
  }
  n.output(0)->setType(t);
}

void pool(Node& n) {
  requireIO(n, 1);
  ValueType t = n.input(0)->type();
  t.format = Format::ND;
  const std::vector<int64_t> kernel = n.attrInts("kernel_shape");
  if (kernel.empty()) fail(n.opType() + " needs kernel_shape");
  if (!t.shape.rankKnown()) {
    n.output(0)->setType(t);
    return;
  }
  if (t.shape.rank() != kernel.size() + 2)
    fail(n.opType() + " kernel_shape has " + std::to_string(kernel.size()) + " axes for an input of rank " +
         std::to_string(t.shape.rank()));
  const size_t spatial = kernel.size();
  const auto strides = n.attrInts("strides"), dilations = n.attrInts("dilations"), pads = n.attrInts("pads");
  if ((!strides.empty() && strides.size() != spatial) || (!dilations.empty() && dilations.size() != spatial) ||
      (!pads.empty() && pads.size() != 2 * spatial))
    fail(n.opType() + " strides, dilations or pads do not match kernel_shape");
  const std::string autoPad = n.attrString("auto_pad", "NOTSET");
  const bool ceilMode = n.attrInt("ceil_mode", 0) != 0;
  for (size_t i = 0; i < spatial; ++i)
    t.shape.dims()[i + 2] = windowExtent(t.shape[i + 2], kernel[i], strides.empty() ? 1 : strides[i],
                                         dilations.empty() ? 1 : dilations[i], pads.empty() ? 0 : pads[i],
                                         pads.empty() ? 0 : pads[i + spatial], autoPad, ceilMode);
  n.output(0)->setType(t);
}

void deformConv(Node& n) {
  requireIO(n, 3);
  const Shape& x = n.input(0)->type().shape;
  const Shape& w = n.input(1)->type().shape;
  ValueType t = n.input(0)->type();
  t.format = Format::ND;
  if (!x.rankKnown() || !w.rankKnown() || x.rank() < 3 || w.rank() != x.rank()) {
    t.shape = Shape::unknownRank();
    n.output(0)->setType(t);
    return;
  }
  const size_t spatial = x.rank() - 2;
  const auto kernel = n.attrInts("kernel_shape"), strides = n.attrInts("strides"),
             dilations = n.attrInts("dilations"), pads = n.attrInts("pads");
  std::vector<Dim> dims{x[0], w[0]};
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t k = i < kernel.size() ? kernel[i] : (w[i + 2].isStatic() ? w[i + 2].value : -1);
    const bool padded = pads.size() == 2 * spatial;
    dims.push_back(windowExtent(x[i + 2], k, i < strides.size() ? strides[i] : 1,
                                i < dilations.size() ? dilations[i] : 1, padded ? pads[i] : 0,
                                padded ? pads[i + spatial] : 0, "NOTSET", false));
  }
  t.shape = Shape(std::move(dims));
  n.output(0)->setType(t);
}

// Attention-23: Q [B, Sq, qH·D] or [B, qH, Sq, D]; K, V likewise with kvH heads (GQA: qH a multiple of kvH);
// past_key / past_value [B, kvH, P, D]. Y has Q's layout with V's head size; present_* [B, kvH, P + Skv, D|Dv];
// qk_matmul_output [B, qH, Sq, P + Skv].
void attention(Node& n) {
  requireIO(n, 3);
  const ValueType q = n.input(0)->type(), k = n.input(1)->type(), v = n.input(2)->type();
  ValueType y = q;
  y.format = Format::ND;
  const int64_t qHeads = n.attrInt("q_num_heads", 0), kvHeads = n.attrInt("kv_num_heads", 0);
  if (!q.shape.rankKnown() || !k.shape.rankKnown() || !v.shape.rankKnown()) {
    y.shape = Shape::unknownRank();
    setOutput(n, 0, y);
    return;
  }
  const size_t rank = q.shape.rank();
  if (rank != 3 && rank != 4) fail("Attention Q has rank " + std::to_string(rank) + ", not 3 or 4");
  if (k.shape.rank() != rank || v.shape.rank() != rank) fail("Attention Q, K and V differ in rank");
  if (rank == 3 && (qHeads <= 0 || kvHeads <= 0)) fail("Attention with 3-D inputs needs q_num_heads and kv_num_heads");
  Dim batch = q.shape[0], sq = rank == 3 ? q.shape[1] : q.shape[2], skv = rank == 3 ? k.shape[1] : k.shape[2];
  Dim qh = rank == 3 ? Dim::fixed(qHeads) : q.shape[1], kvh = rank == 3 ? Dim::fixed(kvHeads) : k.shape[1];
  auto perHead = [&](const Dim& width, int64_t heads) {
    if (!width.isStatic()) return Dim::unknown();
    if (width.value % heads != 0)
      fail("Attention hidden size " + std::to_string(width.value) + " is not a multiple of " + std::to_string(heads) +
           " heads");
    return Dim::fixed(width.value / heads);
  };
  const Dim dk = rank == 3 ? perHead(k.shape[2], kvHeads) : k.shape[3];
  const Dim dv = rank == 3 ? perHead(v.shape[2], kvHeads) : v.shape[3];
  if (rank == 3) perHead(q.shape[2], qHeads);
  if (qh.isStatic() && kvh.isStatic() && (kvh.value == 0 || qh.value % kvh.value != 0))
    fail("Attention q_num_heads " + qh.toString() + " is not a multiple of kv_num_heads " + kvh.toString());
  if (rank == 3) {
    y.shape = Shape({batch, sq, qh.isStatic() && dv.isStatic() ? Dim::fixed(qh.value * dv.value) : Dim::unknown()});
  } else {
    y.shape = Shape({batch, qh, sq, dv});
  }
  setOutput(n, 0, y);
  Dim total = skv;
  if (const Value* past = n.input(4); past && past->type().shape.rankKnown() && past->type().shape.rank() == 4) {
    const Dim& p = past->type().shape[2];
    total = p.isStatic() && skv.isStatic() ? Dim::fixed(p.value + skv.value) : Dim::unknown();
  } else if (n.input(4)) {
    total = Dim::unknown();
  }
  ValueType present = k;
  present.format = Format::ND;
  present.shape = Shape({batch, kvh, total, dk});
  setOutput(n, 1, present);
  present.dtype = v.dtype;
  present.shape = Shape({batch, kvh, total, dv});
  setOutput(n, 2, present);
  ValueType scores = q;
  scores.format = Format::ND;
  scores.shape = Shape({batch, qh, sq, total});
  setOutput(n, 3, scores);
}

// AffineGrid-20: theta [N, 2, 3] with size [N, C, H, W] -> [N, H, W, 2]; theta [N, 3, 4] with [N, C, D, H, W] ->
// [N, D, H, W, 3].
void affineGrid(Node& n) {
  requireIO(n, 2);
  ValueType t = n.input(0)->type();
  t.format = Format::ND;
  auto size = constantInts(n, 1);
  if (!size) {
    const Shape& s = n.input(1)->type().shape;
    const bool known = s.rankKnown() && s.rank() == 1 && s[0].isStatic();
    t.shape = known ? Shape(std::vector<Dim>(static_cast<size_t>(s[0].value - 1), Dim::unknown())) : Shape::unknownRank();
    n.output(0)->setType(t);
    return;
  }
  if (size->size() != 4 && size->size() != 5) fail("AffineGrid size has " + std::to_string(size->size()) + " values, not 4 or 5");
  for (int64_t d : *size)
    if (d < 0) fail("AffineGrid size has a negative extent");
  std::vector<Dim> dims{Dim::fixed((*size)[0])};
  for (size_t i = 2; i < size->size(); ++i) dims.push_back(Dim::fixed((*size)[i]));
  dims.push_back(Dim::fixed(static_cast<int64_t>(size->size()) - 2));
  t.shape = Shape(std::move(dims));
  n.output(0)->setType(t);
}

// Col2Im-18: input [N, C·prod(block_shape), L], image_shape, block_shape -> [N, C, image...].
void col2Im(Node& n) {
  requireIO(n, 3);
  ValueType t = n.input(0)->type();
  t.format = Format::ND;
  const auto image = constantInts(n, 1), block = constantInts(n, 2);
  const Shape& x = t.shape;
  if (!image || !block || !x.rankKnown() || x.rank() != 3) {
    t.shape = image ? Shape(std::vector<Dim>(image->size() + 2, Dim::unknown())) : Shape::unknownRank();
    n.output(0)->setType(t);
    return;
  }
  if (image->size() != block->size()) fail("Col2Im image_shape and block_shape differ in length");
  int64_t blockElems = 1;
  for (int64_t b : *block) {
    if (b <= 0) fail("Col2Im block_shape must be positive");
    blockElems *= b;
  }
  Dim c = Dim::unknown();
  if (x[1].isStatic()) {
    if (x[1].value % blockElems != 0)
      fail("Col2Im input has " + std::to_string(x[1].value) + " rows, not a multiple of the block's " +
           std::to_string(blockElems));
    c = Dim::fixed(x[1].value / blockElems);
  }
  std::vector<Dim> dims{x[0], c};
  for (int64_t d : *image) {
    if (d < 0) fail("Col2Im image_shape has a negative extent");
    dims.push_back(Dim::fixed(d));
  }
  t.shape = Shape(std::move(dims));
  n.output(0)->setType(t);
}

void centerCropPad(Node& n) {
  auto ranked = ndTypeOfKnownRank(n, 2);
  if (!ranked) return;
  ValueType t = std::move(*ranked);
  const std::vector<int64_t> axes = axesAttrOrAll(n, t.shape.rank());
  const auto shape = constantInts(n, 1);
  if (shape && shape->size() != axes.size())
    fail("CenterCropPad has " + std::to_string(shape->size()) + " extents for " + std::to_string(axes.size()) + " axes");
  for (size_t i = 0; i < axes.size(); ++i) {
    if (shape && (*shape)[i] < 0) fail("CenterCropPad extent is negative");
    t.shape.dims()[static_cast<size_t>(axes[i])] = shape ? Dim::fixed((*shape)[i]) : Dim::unknown();
  }
  n.output(0)->setType(t);
}

// DFT-20: input [..., signal..., 1 or 2]; dft_length (input 1) and axis (input 2, default -2) are inputs now.
void dft(Node& n) {
  auto ranked = ndTypeOfKnownRank(n, 1);
  if (!ranked) return;
  ValueType t = std::move(*ranked);
  const size_t rank = t.shape.rank();
  if (rank < 2) fail("DFT input needs a rank of at least 2");
  const Dim& last = t.shape[rank - 1];
  if (last.isStatic() && last.value != 1 && last.value != 2) fail("DFT input's last axis must be 1 (real) or 2 (complex)");
  int64_t axis = -2;
  if (n.input(2)) {
    auto a = constantInts(n, 2);
    if (!a) {
      t.shape = unknownExtents(t.shape);
      t.shape.dims()[rank - 1] = Dim::fixed(2);
      n.output(0)->setType(t);
      return;
    }
    if (a->size() != 1) fail("DFT axis must be a scalar");
    axis = (*a)[0];
  }
  // The axis counts the signal axes only: the last (real/imaginary) axis is not one of them.
  const size_t ax = static_cast<size_t>(normalizedAxis(axis, rank, "DFT axis"));
  if (ax == rank - 1) fail("DFT axis cannot be the real/imaginary axis");
  Dim length = t.shape[ax];
  if (n.input(1)) {
    auto l = constantInts(n, 1);
    if (!l) length = Dim::unknown();
    else if (l->size() != 1 || (*l)[0] < 1) fail("DFT dft_length must be a positive scalar");
    else length = Dim::fixed((*l)[0]);
  }
  if (n.attrInt("onesided", 0) && length.isStatic()) length = Dim::fixed(length.value / 2 + 1);
  t.shape.dims()[ax] = length;
  t.shape.dims()[rank - 1] = Dim::fixed(2);
  n.output(0)->setType(t);
}

void gridSample(Node& n) {
  requireIO(n, 2);
  ValueType t = n.input(0)->type();
  t.format = Format::ND;
  const Shape& x = t.shape;
  const Shape& g = n.input(1)->type().shape;
  if (!x.rankKnown() || !g.rankKnown()) {
    t.shape = x.rankKnown() ? unknownExtents(x) : Shape::unknownRank();
    n.output(0)->setType(t);
    return;
  }
  if (x.rank() < 3 || g.rank() != x.rank()) fail("GridSample grid's rank differs from X's");
  if (g[g.rank() - 1].isStatic() && g[g.rank() - 1].value != static_cast<int64_t>(x.rank()) - 2)
    fail("GridSample grid's last axis must hold " + std::to_string(x.rank() - 2) + " coordinates");
  std::vector<Dim> dims{x[0], x[1]};
  for (size_t i = 1; i + 1 < g.rank(); ++i) dims.push_back(g[i]);
  t.shape = Shape(std::move(dims));
  n.output(0)->setType(t);
}

void cast(Node& n) {
  requireIO(n, 1);
  const auto to = dtypeFromOnnx(static_cast<int>(n.attrInt("to", 0)));
  if (!to || *to == DType::Undefined) fail("Cast 'to' " + std::to_string(n.attrInt("to", 0)) + " is not an element type");
  ValueType t = n.input(0)->type();
  t.kind = ValueType::Kind::Tensor;
  t.dtype = *to;
  n.output(0)->setType(t);
}

void castLike(Node& n) {
  requireIO(n, 2);
  ValueType t = n.input(0)->type();
  t.dtype = n.input(1)->type().dtype;
  n.output(0)->setType(t);
}

// QuantizeLinear: y's type is output_dtype (21+), else y_zero_point's, else uint8.
void checkBlocks(const Node& n) {
  if (std::string problem = blockedScaleProblem(n); !problem.empty()) fail(problem);
}

}  // namespace kiln::newer_onnx

namespace kiln {

// A blocked scale (block_size > 0) has x's rank with ceil(D / block_size) along axis and x's extents elsewhere.
std::string blockedScaleProblem(const Node& n) {
  const int64_t block = n.attrInt("block_size", 0);
  if (block < 0) return n.opType() + " block_size must not be negative";
  const Value* x = n.input(0);
  const Value* scale = n.input(1);
  if (block == 0 || !x || !scale) return "";
  const Shape& xs = x->type().shape;
  const Shape& ss = scale->type().shape;
  if (!xs.rankKnown() || !ss.rankKnown()) return "";
  if (ss.rank() != xs.rank())
    return n.opType() + " with block_size needs a scale of x's rank (" + std::to_string(xs.rank()) + "), not " +
           std::to_string(ss.rank());
  const int64_t rank = static_cast<int64_t>(xs.rank());
  int64_t axis = n.attrInt("axis", 1);
  if (axis < -rank || axis >= rank) return n.opType() + " axis " + std::to_string(axis) + " is out of range";
  if (axis < 0) axis += rank;
  for (size_t i = 0; i < xs.rank(); ++i) {
    if (!xs[i].isStatic() || !ss[i].isStatic()) continue;
    const bool along = static_cast<int64_t>(i) == axis;
    const int64_t want = along ? (xs[i].value + block - 1) / block : xs[i].value;
    if (ss[i].value != want)
      return n.opType() + " block_size " + std::to_string(block) + (along ? " over an axis of " : " beside an axis of ") +
             std::to_string(xs[i].value) + " needs " + std::to_string(want) + " scales along axis " +
             std::to_string(i) + ", but the scale has " + std::to_string(ss[i].value);
  }
  return "";
}

}  // namespace kiln

namespace kiln::newer_onnx {

void quantizeLinear(Node& n) {
  requireIO(n, 2);
  checkBlocks(n);
  DType out = n.input(2) ? n.input(2)->type().dtype : DType::UInt8;
  const DType attr = elementTypeAttr(n, "output_dtype", DType::Undefined);
  if (attr != DType::Undefined) {
    if (n.input(2) && out != DType::Undefined && out != attr)
      fail("QuantizeLinear output_dtype " + std::string(dtypeName(attr)) + " differs from y_zero_point's " +
           std::string(dtypeName(out)));
    out = attr;
  }
  ValueType t = n.input(0)->type();
  t.dtype = out == DType::Undefined ? DType::UInt8 : out;
  n.output(0)->setType(t);
}

void dequantizeLinear(Node& n) {
  requireIO(n, 2);
  checkBlocks(n);
  ValueType t = n.input(0)->type();
  const DType scale = n.input(1)->type().dtype;
  t.dtype = elementTypeAttr(n, "output_dtype", isLowBitFloat(scale) ? DType::Float : scale);  // an MX scale: fp32
  n.output(0)->setType(t);
}

void constantOfShape(Node& n) {
  requireIO(n, 1);
  DType type = DType::Float;
  if (const Attribute* a = n.attr("value"))
    if (const Tensor* v = a->get<Tensor>()) {
      if (v->numel() != 1) fail("ConstantOfShape value must hold one element");
      type = v->dtype();
    }
  const auto dims = constantInts(n, 0);
  if (!dims) {
    const Shape& s = n.input(0)->type().shape;
    const bool known = s.rankKnown() && s.rank() == 1 && s[0].isStatic();
    n.output(0)->setType(ValueType::tensor(
        type, known ? Shape(std::vector<Dim>(static_cast<size_t>(s[0].value), Dim::unknown())) : Shape::unknownRank()));
    return;
  }
  for (int64_t d : *dims)
    if (d < 0) fail("ConstantOfShape extent " + std::to_string(d) + " is negative");
  n.output(0)->setType(ValueType::tensor(type, Shape::ofStatic(*dims)));
}

void optionalHasElement(Node& n) {
  if (!n.output(0)) fail("OptionalHasElement needs an output");
  n.output(0)->setType(ValueType::tensor(DType::Bool, Shape()));
}

void optionalGetElement(Node& n) {
  requireIO(n, 1);
  const ValueType& t = n.input(0)->type();
  if (t.kind == ValueType::Kind::Optional && t.element) n.output(0)->setType(*t.element);
  else n.output(0)->setType(t);  // opset 18: a plain tensor or sequence passes through
}

void stringSplit(Node& n) {
  requireIO(n, 1);
  const Shape& x = n.input(0)->type().shape;
  Shape y = Shape::unknownRank();
  if (x.rankKnown()) {
    std::vector<Dim> dims = x.dims();
    dims.push_back(Dim::unknown());  // the most substrings of any element
    y = Shape(std::move(dims));
  }
  n.output(0)->setType(ValueType::tensor(DType::String, y));
  setOutput(n, 1, ValueType::tensor(DType::Int64, x));
}

void bitCast(Node& n) {
  requireIO(n, 1);
  const auto to = dtypeFromOnnx(static_cast<int>(n.attrInt("to", 0)));
  if (!to || *to == DType::Undefined || *to == DType::String)
    fail("BitCast 'to' " + std::to_string(n.attrInt("to", 0)) + " is not a non-string element type");
  ValueType t = n.input(0)->type();
  if (t.dtype != DType::Undefined && dtypeBits(t.dtype) != dtypeBits(*to))
    fail("BitCast from " + std::string(dtypeName(t.dtype)) + " (" + std::to_string(dtypeBits(t.dtype)) + " bits) to " +
         std::string(dtypeName(*to)) + " (" + std::to_string(dtypeBits(*to)) + " bits): the widths differ");
  t.dtype = *to;
  n.output(0)->setType(t);
}

void imageDecoder(Node& n) {
  requireIO(n, 1);
  const std::string format = n.attrString("pixel_format", "RGB");
  n.output(0)->setType(ValueType::tensor(DType::UInt8, Shape({Dim::unknown(), Dim::unknown(),
                                                               Dim::fixed(format == "Grayscale" ? 1 : 3)})));
}

}  // namespace kiln::newer_onnx
