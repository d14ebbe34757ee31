#pragma once
// GE's op types run on Kiln's kernels. A graph GE made (an .om with its weights, a dump whose Consts carry data, an
// om JSON) holds ops in the domain "ge" with GE's attributes and layouts; this builds its executable twin: the same
// values (names, types, blocked layouts and origins, the device offsets GE planned in "mem.out") produced by ONNX /
// Kiln ops with the same arithmetic. The emulator runs the twin like any compiled graph — in reference mode, or in
// one arena at GE's own offsets — and its stored-layout layer (emulator/stored_layout.h) reads every NC1HWC0,
// FRACTAL_Z and FRACTAL_NZ tensor back at its origin shape and format, NHWC and HWCN included.
//
// How each GE op is read (one family per file: ge_nn_lowering.cpp, ge_tensor_lowering.cpp, ge_math_lowering.cpp):
//   - an op Kiln wrote itself carries its Kiln type in "_kiln.op_type": it becomes that op again, attributes as
//     written (bodies too);
//   - a GE op whose attributes say what it computes (Conv2D with strides and pads, MatMulV2 with its transpose
//     flags, SoftmaxV2's axes, Cast, TransData...) becomes the equivalent op(s);
//   - GE's buffer-fused ops (UB fusion: a Conv2D or MatMul with the element-wise ops after it compiled into one
//     kernel) keep no attributes of their head op in the file. What they compute is read off what the file does
//     keep: the fused kernel's name lists the fused ops ("te_fused_op_conv2d_relu_<hash>"), and the head's geometry
//     follows from the shapes (a convolution's kernel from its filter, stride and padding as the one combination
//     that gives the output extent; a matrix product's transposes from which extents agree). Where that is not one
//     answer (an extent several strides explain, an op in the kernel name Kiln cannot place, a parameter such as a
//     leaky ReLU's slope that no shape gives) the op is not run and the reason says so.
// Every op that cannot run is listed with its type and why; nothing is approximated silently.
#include <memory>
#include <string>
#include <vector>

#include "ir/model.h"

namespace kiln::geops {

struct LoweringIssue {
  std::string op, type, why;
  std::string text() const { return "op '" + op + "' (" + type + "): " + why; }
};

struct LoweringOptions {
  // Every fp16 tensor computed in fp32 instead (constants converted, Casts to fp16 become Casts to fp32): the same
  // network at full precision, the yardstick for what GE's fp16 choice costs.
  bool promoteFloat16 = false;
};

struct LoweredModel {
  std::unique_ptr<Model> model;          // null when an op cannot run (see issues)
  std::vector<LoweringIssue> issues;     // ops that cannot run, and why
  std::vector<std::string> inferred;     // ops whose geometry was read off shapes or a kernel name, and what it was
};

LoweredModel lowerGeModel(const Model& ge, const LoweringOptions& options = {});

// Whether Kiln can lower ops of this GE type at all (a given op may still lack what it needs): for `kiln inspect`.
bool lowersGeType(const std::string& type);

}  // namespace kiln::geops
