// GE's data-movement ops as ONNX ops. Layout conversions (TransData) and the ops that only change a tensor's
// extents (Reshape, Flatten, Squeeze, ExpandDims...) are the identity on the logical tensor: the twin keeps every
// value's recorded layout, so the stored-layout layer does the re-blocking, and a change of extents becomes a Reshape
// to the output's own logical extents (GE's TransData may fold a Reshape into itself: [1,4,4,32] NHWC -> [1,512]
// FRACTAL_NZ in a TensorFlow model).
//   Data / NetOutput    the graph's inputs / outputs
//   Cast                to the output's element type (GE's dst_type is a C++ enum; the output's type says it plainly)
//   TransposeD          perm;            Transpose: perm as input 1
//   ConcatD / ConcatV2D concat_dim;      ConcatV2: axis as the last input; Concat: concat_dim as input 0
//   ArgMaxD / ArgMinD   dimension;       ArgMaxV2: dimension as input 1 (output type from the output)
//   Reduce<Op>D         axes, keep_dims; Reduce<Op>: axes as input 1
//   GatherV2D           axis;            GatherV2: axis as input 2; Gather: axis 0
//   TileD               multiples;       Tile: multiples as input 1
//   SliceD              offsets, size;   Slice: offsets and size as inputs 1 and 2
//   PadV3               paddings (input 1), mode, paddings_contiguous -> Pad
//   Send, Recv, AtomicAddrClean, NoOp...   stream order and memory clearing: nothing to compute
#include "kernels/ge/ge_lowering_context.h"

namespace kiln::geops {
namespace {

void data(OpLowering& op) { op.result(0, op.required(0)); }

// Ops that order streams or clear memory and produce no data (Send / Recv record and wait for events; AtomicAddrClean
// zeroes the outputs of atomic-add kernels, which the emulator's kernels write whole): nothing to compute. An op of
// these types that does produce data is not one Kiln knows.
void noData(OpLowering& op) {
  if (op.ge().numOutputs() > 0 && op.ge().output(0) && op.ge().output(0)->hasUses())
    op.fail("a " + op.ge().opType() + " whose output other ops read is not one Kiln knows");
}

// PadV3: paddings as input 1 ([rank, 2] begin/end pairs, or all begins then all ends when paddings_contiguous is
// false), mode constant / reflect / edge, constant_values as input 2.
void padV3(OpLowering& op) {
  const std::vector<int64_t> p = op.constInts(1);
  const size_t rank = op.inputDims(0).size();
  if (p.size() != 2 * rank) op.fail("paddings hold " + std::to_string(p.size()) + " values for a rank-" + std::to_string(rank) + " input");
  const bool contiguous = op.attrInt("paddings_contiguous", 1) != 0;
  std::vector<int64_t> pads(2 * rank);
  for (size_t a = 0; a < rank; ++a) {
    pads[a] = contiguous ? p[2 * a] : p[a];
    pads[rank + a] = contiguous ? p[2 * a + 1] : p[rank + a];
  }
  std::vector<Value*> ins = {op.required(0), op.int64s(pads)};
  if (op.input(2)) ins.push_back(op.input(2));
  std::string mode = op.attrString("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge") op.fail("pad mode '" + mode + "' is not constant, reflect or edge");
  op.result(0, op.add("Pad", ins, {stringAttr("mode", mode)}));
}

void netOutput(OpLowering& op) {
  for (size_t i = 0; i < op.ge().numOutputs(); ++i) op.result(i, op.required(i));
}

// The identity on the logical tensor, at the output's logical extents.
void sameElements(OpLowering& op) {
  Value* x = op.required(0);
  const std::vector<int64_t> in = op.inputDims(0), out = op.outputDims(0);
  op.result(0, in == out ? x : op.reshape(x, out));
}

void cast(OpLowering& op) {
  op.result(0, op.add("Cast", {op.required(0)}, {intAttr("to", int64_t(dtypeToOnnx(op.outputType(0))))}));
}

void transpose(OpLowering& op) {
  const std::vector<int64_t> perm = op.ge().opType() == "TransposeD" ? op.attrInts("perm") : op.constInts(1);
  if (perm.empty()) op.fail("its permutation is missing");
  op.result(0, op.transpose(op.required(0), perm));
}

void concat(OpLowering& op) {
  const std::string type = op.ge().opType();
  std::vector<Value*> parts;
  int64_t axis = 0;
  size_t first = 0, last = op.numInputs();
  if (type == "ConcatD" || type == "ConcatV2D") {
    axis = op.attrInt("concat_dim", op.attrInt("axis", 0));
  } else if (type == "ConcatV2") {
    axis = op.constInts(--last).at(0);
  } else {  // Concat: the axis first
    axis = op.constInts(0).at(0);
    first = 1;
  }
  for (size_t i = first; i < last; ++i) parts.push_back(op.required(i));
  op.result(0, op.add("Concat", parts, {intAttr("axis", axis)}));
}

void argExtreme(OpLowering& op) {
  const bool max = op.ge().opType().starts_with("ArgMax");
  const int64_t axis = op.ge().opType().ends_with("D") ? op.attrInt("dimension", 0) : op.constInts(1).at(0);
  Value* idx = op.add(max ? "ArgMax" : "ArgMin", {op.required(0)}, {intAttr("axis", axis), intAttr("keepdims", 0)});
  if (op.outputType(0) != DType::Int64) idx = op.add("Cast", {idx}, {intAttr("to", int64_t(dtypeToOnnx(op.outputType(0))))});
  op.result(0, idx);
}

void reduce(OpLowering& op) {
  const std::string type = op.ge().opType();
  const bool attrAxes = type.ends_with("D");
  const std::string onnx = type.substr(0, attrAxes ? type.size() - 1 : type.size());  // ReduceMeanD -> ReduceMean
  std::vector<int64_t> axes = attrAxes ? op.attrInts("axes") : op.constInts(1);
  const int64_t keep = op.attrInt("keep_dims", 0);
  std::vector<NamedAttribute> attrs = {intAttr("keepdims", keep)};
  if (axes.empty()) op.fail("its axes list is empty, which TensorFlow reads as no axis and ONNX as every axis");
  if (onnx == "ReduceSum") {
    op.result(0, op.add(onnx, {op.required(0), op.int64s(axes)}, std::move(attrs)));
  } else {
    attrs.push_back(intsAttr("axes", axes));
    op.result(0, op.add(onnx, {op.required(0)}, std::move(attrs)));
  }
}

void gather(OpLowering& op) {
  const std::string type = op.ge().opType();
  const int64_t axis = type == "GatherV2D" ? op.attrInt("axis", 0) : type == "GatherV2" ? op.constInts(2).at(0) : 0;
  op.result(0, op.add("Gather", {op.required(0), op.required(1)}, {intAttr("axis", axis)}));
}

void tile(OpLowering& op) {
  const std::vector<int64_t> m = op.ge().opType() == "TileD" ? op.attrInts("multiples") : op.constInts(1);
  op.result(0, op.add("Tile", {op.required(0), op.int64s(m)}));
}

void slice(OpLowering& op) {
  const bool attrs = op.ge().opType() == "SliceD";
  const std::vector<int64_t> offsets = attrs ? op.attrInts("offsets") : op.constInts(1);
  std::vector<int64_t> size = attrs ? op.attrInts("size") : op.constInts(2);
  const std::vector<int64_t> in = op.inputDims(0);
  if (offsets.size() != in.size() || size.size() != in.size()) op.fail("offsets / size do not match its input's rank");
  std::vector<int64_t> ends, axes;
  for (size_t a = 0; a < in.size(); ++a) {
    ends.push_back(size[a] < 0 ? in[a] : offsets[a] + size[a]);  // -1: to the end
    axes.push_back(int64_t(a));
  }
  op.result(0, op.add("Slice", {op.required(0), op.int64s(offsets), op.int64s(ends), op.int64s(axes)}));
}

}  // namespace

void addTensorLowerings(LoweringTable& t) {
  t["Data"] = data;
  for (const char* k : {"Send", "Recv", "AtomicAddrClean", "NoOp", "StreamActive", "StreamSwitch", "LabelSet",
                        "LabelGoto", "LabelGotoEx"})
    t[k] = noData;
  t["PadV3"] = padV3;
  t["NetOutput"] = netOutput;
  for (const char* k : {"TransData", "Reshape", "Flatten", "FlattenV2", "Squeeze", "SqueezeV2", "Unsqueeze",
                        "UnsqueezeV2", "ExpandDims", "Identity", "Snapshot", "StopGradient", "PreventGradient"})
    t[k] = sameElements;
  t["Cast"] = cast;
  t["Transpose"] = transpose;
  t["TransposeD"] = transpose;
  for (const char* k : {"ConcatD", "ConcatV2D", "ConcatV2", "Concat"}) t[k] = concat;
  for (const char* k : {"ArgMaxD", "ArgMaxV2", "ArgMinD", "ArgMin"}) t[k] = argExtreme;
  for (const char* k : {"ReduceMeanD", "ReduceSumD", "ReduceMaxD", "ReduceMinD", "ReduceProdD", "ReduceMean",
                        "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd"})
    t[k] = reduce;
  for (const char* k : {"GatherV2D", "GatherV2", "Gather"}) t[k] = gather;
  t["TileD"] = tile;
  t["Tile"] = tile;
  t["SliceD"] = slice;
  t["Slice"] = slice;
}

}  // namespace kiln::geops
