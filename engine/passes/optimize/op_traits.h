#pragma once
// What the precision and format passes need to know about an op, by op type (qualified: "Conv", "kiln:FusedConv"),
// never by node name. One table here so RefineRunningPrecision and RefineRunningFormat agree, and so the fused ops
// the fusion rules create are treated like the ops they replace.
#include <cstddef>
#include <cstdint>
#include <string>

namespace kiln {

class Node;

// How an op reads and writes layouts.
enum class FormatRole {
  Logical,      // needs the logical layout (ND / NCHW): shape ops, Reshape, Transpose, Concat, Softmax, unknown ops
  Conv5HD,      // activations NC1HWC0 in and out, weight FRACTAL_Z
  MatMulNZ,     // both operands and the output FRACTAL_NZ
  Elementwise,  // format agnostic: computes the same in any layout when its inputs agree
  Pool5HD,      // spatial pooling the AI Core implements on NC1HWC0
  Concat,       // joins blocked inputs along an axis the blocks do not split
  Norm5HD,      // per-channel normalisation (BatchNorm, InstanceNorm) on NC1HWC0, its [C] parameters re-laid-out
};
FormatRole formatRole(const Node& n);

// allow_mix_precision's lists. White: cube ops, fp16 is where their throughput is. Black: numerically sensitive,
// kept fp32. Grey: everything else, runs in the precision its producer hands it.
enum class PrecisionList { White, Black, Grey };
PrecisionList precisionList(const Node& n);

// Ops the cube computes only in fp16 (allow_fp32_to_fp16 narrows exactly these).
bool cubeOnlyFp16(const Node& n);
// Ops whose output element type is chosen by an attribute or which have no fp16 kernel: never narrowed.
bool keepsItsDtype(const Node& n);
// Inputs that stay fp32 even when the op runs in fp16 (Resize's roi and scales, Dropout's ratio: parameters with
// their own type, not data).
bool fp32OnlyInput(const Node& n, size_t index);
// Reshape, Flatten, Squeeze, Unsqueeze, Identity relabel a buffer without computing on it (Kiln places the first
// four on the host as shape bookkeeping): they carry whatever element type their data input has.
bool relabelsOnly(const Node& n);
// Shape and Size read only the tensor's metadata: any element type will do, no Cast is needed in front of them.
bool readsOnlyShape(const Node& n);
// Can input (else output) `index` of n hold a floating-point tensor? From the ONNX schema's allowed types (Reshape's
// shape, Gather's indices cannot); true for ops without a schema (Kiln's, contrib, plugins).
bool mayHoldFloat(const Node& n, size_t index, bool input, int64_t opset);
// True when the node runs on the AI Core: its "engine" annotation (ValidityCheck), else the op registry's unit.
bool runsOnAiCore(const Node& n, int64_t opset);

}  // namespace kiln
