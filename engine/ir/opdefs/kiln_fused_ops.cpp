// The fused ops the Stage 2 fusion rules create (engine/fusion/rules), with hand-written inference:
//   FusedMatMul(A, B [, Bias])  = activation(alpha · op(A) @ op(B) + Bias), op = transpose of the last two axes when
//                                 trans_a / trans_b is 1; numpy matmul broadcasting; activation "", Gelu, GeluTanh,
//                                 Relu. Cube.
//   FusedConv(X, W [, B [, Z]])  = activation(Conv(X, W, B) + Z) with Conv's attributes, `activation` and
//                                 `activation_params`; Z (a residual of the output's shape) is optional. Cube.
//   WeightQuantMatMul(A, Wq, scale [, zero_point]) = A @ DequantizeLinear(Wq, scale, zero_point) with its axis and
//                                 block_size: int4 / int8 weights dequantized inside the Cube op. Cube.
//   Gelu(X [, B])                = GELU(X + B) with approximate "none" (erf) or "tanh"; B, optional, is a bias
//                                 along X's last axis. Vector.
//   AddLayerNorm(A, B [, Scale [, Bias]]) -> Y [, Sum]   = LayerNorm(A + B) over [axis, rank), and A + B itself when
//   AddRmsNorm(A, B [, Scale]) -> Y [, Sum]                the residual stream still needs it. Vector.
#include <algorithm>
#include <stdexcept>

#include "ir/graph.h"
#include "ir/opdefs/infer_util.h"
#include "ir/opdefs/op_registry.h"

namespace kiln {
namespace {

void inferFusedMatMul(Node& n) {
  requireIO(n, 2);
  Shape a = n.input(0)->type().shape, b = n.input(1)->type().shape;
  ValueType out = n.input(0)->type();
  if (!a.rankKnown() || !b.rankKnown() || a.rank() == 0 || b.rank() == 0) {
    out.shape = Shape::unknownRank();
    n.output(0)->setType(out);
    return;
  }
  auto swapLast = [](Shape& s) {
    if (s.rank() >= 2) std::swap(s.dims()[s.rank() - 1], s.dims()[s.rank() - 2]);
  };
  if (n.attrInt("trans_a", 0)) swapLast(a);
  if (n.attrInt("trans_b", 0)) swapLast(b);
  const bool aVector = a.rank() == 1, bVector = b.rank() == 1;
  if (aVector) a = Shape({Dim::fixed(1), a[0]});
  if (bVector) b = Shape({b[0], Dim::fixed(1)});
  const Dim& k1 = a[a.rank() - 1];
  const Dim& k2 = b[b.rank() - 2];
  if (k1.isStatic() && k2.isStatic() && k1.value != k2.value)
    throw std::runtime_error("FusedMatMul inner dims " + k1.toString() + " and " + k2.toString() + " differ");
  const Shape batch = broadcastShapes(Shape(std::vector<Dim>(a.dims().begin(), a.dims().end() - 2)),
                                      Shape(std::vector<Dim>(b.dims().begin(), b.dims().end() - 2)));
  std::vector<Dim> dims = batch.dims();
  if (!aVector) dims.push_back(a[a.rank() - 2]);
  if (!bVector) dims.push_back(b[b.rank() - 1]);
  out.shape = Shape(std::move(dims));
  if (const Value* bias = n.input(2)) out.shape = broadcastShapes(out.shape, bias->type().shape);
  n.output(0)->setType(out);
}

// Conv's output extents: floor((D + pads - dilation·(k - 1) - 1) / stride) + 1, or ceil(D / stride) for SAME_*.
void inferFusedConv(Node& n) {
  requireIO(n, 2);
  const Shape& x = n.input(0)->type().shape;
  const Shape& w = n.input(1)->type().shape;
  ValueType out = n.input(0)->type();
  if (!x.rankKnown() || !w.rankKnown() || x.rank() < 3 || w.rank() != x.rank()) {
    out.shape = Shape::unknownRank();
    n.output(0)->setType(out);
    return;
  }
  const size_t spatial = x.rank() - 2;
  std::vector<int64_t> kernel = n.attrInts("kernel_shape"), strides = n.attrInts("strides"),
                       dilations = n.attrInts("dilations"), pads = n.attrInts("pads");
  const std::string autoPad = n.attrString("auto_pad", "NOTSET");
  std::vector<Dim> dims{x[0], w[0]};
  for (size_t i = 0; i < spatial; ++i) {
    const Dim& d = x[i + 2];
    const int64_t k = i < kernel.size() ? kernel[i] : (w[i + 2].isStatic() ? w[i + 2].value : -1);
    const int64_t s = i < strides.size() ? strides[i] : 1;
    const int64_t dil = i < dilations.size() ? dilations[i] : 1;
    const bool padded = pads.size() == 2 * spatial;
    dims.push_back(windowExtent(d, k, s, dil, padded ? pads[i] : 0, padded ? pads[i + spatial] : 0, autoPad, false));
  }
  out.shape = Shape(std::move(dims));
  n.output(0)->setType(out);
}

// A [..., K] times the dequantized weights [K, N]: [..., N] in the scale's element type (the activation's).
void inferWeightQuantMatMul(Node& n) {
  requireIO(n, 3);
  ValueType out = n.input(0)->type();
  out.dtype = n.input(2)->type().dtype;
  const Shape& w = n.input(1)->type().shape;
  if (out.shape.rankKnown() && out.shape.rank() >= 1 && w.rankKnown() && w.rank() == 2)
    out.shape.dims().back() = w[1];
  else
    out.shape = Shape::unknownRank();
  n.output(0)->setType(out);
}

void inferSameAsFirst(Node& n) {
  requireIO(n, 1);
  n.output(0)->setType(n.input(0)->type());
}

// Y (and the optional Sum) take the broadcast of A and B.
void inferAddNorm(Node& n) {
  requireIO(n, 2);
  ValueType t = n.input(0)->type();
  t.shape = broadcastShapes(t.shape, n.input(1)->type().shape);
  for (size_t i = 0; i < n.numOutputs(); ++i)
    if (Value* o = n.output(i)) o->setType(t);
}

OpDef def(std::string type, int minIn, int maxIn, int maxOut, ComputeUnit unit, std::vector<std::string> in,
          std::vector<std::string> out, std::function<void(Node&)> infer) {
  OpDef d;
  d.domain = std::string(kKilnDomain);
  d.type = std::move(type);
  d.minInputs = minIn;
  d.maxInputs = maxIn;
  d.minOutputs = 1;
  d.maxOutputs = maxOut;
  d.unit = unit;
  d.inputNames = std::move(in);
  d.outputNames = std::move(out);
  d.infer = std::move(infer);
  return d;
}

}  // namespace

void registerKilnFusedOps(OpRegistry& r) {
  r.add(def("FusedMatMul", 2, 3, 1, ComputeUnit::Cube, {"A", "B", "Bias"}, {"Y"}, inferFusedMatMul));
  r.add(def("FusedConv", 2, 4, 1, ComputeUnit::Cube, {"X", "W", "B", "Z"}, {"Y"}, inferFusedConv));
  r.add(def("Gelu", 1, 2, 1, ComputeUnit::Vector, {"X", "B"}, {"Y"}, inferSameAsFirst));
  r.add(def("WeightQuantMatMul", 3, 4, 1, ComputeUnit::Cube, {"A", "Wq", "scale", "zero_point"}, {"Y"},
            inferWeightQuantMatMul));
  r.add(def("AddLayerNorm", 2, 4, 2, ComputeUnit::Vector, {"A", "B", "Scale", "Bias"}, {"Y", "Sum"}, inferAddNorm));
  r.add(def("AddRmsNorm", 2, 3, 2, ComputeUnit::Vector, {"A", "B", "Scale"}, {"Y", "Sum"}, inferAddNorm));
}

}  // namespace kiln
