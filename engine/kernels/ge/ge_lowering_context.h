#pragma once
// Internal to kernels/ge/: what a lowering function sees of the GE op it rewrites and how it adds the twin's ops.
// A lowering reads the op's inputs (their logical shapes and layouts, a Const's data), its attributes, and states
// its results; `fail` says why the op cannot run (the op is then listed, never approximated).
#include <map>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/attribute.h"
#include "ir/graph.h"
#include "kernels/ge/ge_lowering.h"

namespace kiln::geops {

// Thrown by OpLowering::fail: the op cannot run, and why.
class CannotLower : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class OpLowering {
 public:
  OpLowering(Graph& twin, const Node& ge, std::unordered_map<const Value*, Value*>& values,
             const LoweringOptions& options, std::vector<std::string>& inferred);

  const Node& ge() const { return ge_; }
  const LoweringOptions& options() const { return options_; }

  // --- the GE op's operands ---
  size_t numInputs() const { return ge_.numInputs(); }
  Value* input(size_t i) const;  // the twin's value for GE input i; null for an absent optional input
  Value* required(size_t i) const;
  // The logical extents of GE input / output i (a blocked tensor's origin); fails when not static.
  std::vector<int64_t> inputDims(size_t i) const;
  std::vector<int64_t> outputDims(size_t i) const;
  // The logical layout of input / output i: a blocked tensor's origin format, else its format.
  Format inputLayout(size_t i) const;
  Format outputLayout(size_t i) const;
  DType outputType(size_t i) const;  // as the twin computes it (fp32 where fp16 is promoted)
  // Whether a Const (or an initializer) produces GE input i, with or without data in the file.
  bool isConstant(size_t i) const;
  // The data of GE input i when a Const produces it (as stored: its physical layout); null otherwise.
  const Tensor* constInput(size_t i) const;
  // The integers of a Const input (shape operands, axes), in logical order; fails when the input is not constant.
  std::vector<int64_t> constInts(size_t i) const;

  // --- its attributes ---
  bool has(const std::string& name) const { return ge_.attr(name) != nullptr; }
  int64_t attrInt(const std::string& name, int64_t fallback) const { return ge_.attrInt(name, fallback); }
  float attrFloat(const std::string& name, float fallback) const;
  std::string attrString(const std::string& name, const std::string& fallback = {}) const {
    return ge_.attrString(name, fallback);
  }
  std::vector<int64_t> attrInts(const std::string& name) const { return ge_.attrInts(name); }
  // The ops a GE buffer-fused kernel computes, from its kernel name ("te_fused_op_conv2d_relu_<hash>" ->
  // {"conv2d", "relu"}); empty when the op is not such a kernel. Unknown words end the list.
  std::vector<std::string> fusedKernelOps() const;

  // --- building the twin ---
  Value* add(const std::string& type, const std::vector<Value*>& inputs, std::vector<NamedAttribute> attrs = {},
             const std::string& domain = {});
  std::vector<Value*> addMany(const std::string& type, const std::vector<Value*>& inputs, size_t outputs,
                              std::vector<NamedAttribute> attrs = {}, const std::string& domain = {});
  Value* constant(const Tensor& t);  // an initializer of the twin
  Value* int64s(const std::vector<int64_t>& v);
  Value* scalar(double v, DType t);  // a 0-d constant of type t
  Value* transpose(Value* v, const std::vector<int64_t>& perm);
  Value* reshape(Value* v, const std::vector<int64_t>& dims);
  // v viewed in the layout `to` from `from` (NHWC <-> NCHW, HWCN -> NCHW/OIHW); v as it is when they agree.
  Value* relayout(Value* v, Format from, Format to);

  // GE output i is `v` (computed in output i's logical layout and shape).
  void result(size_t i, Value* v);
  [[noreturn]] void fail(const std::string& why) const { throw CannotLower(why); }
  // Something read off shapes or a kernel name rather than an attribute: said in the lowering's report.
  void note(const std::string& what);

  // After the lowering function: every output bound, "mem.out" carried over to the nodes producing them.
  void finish();

 private:
  ValueType twinType(const ValueType& t) const;

  Graph& twin_;
  const Node& ge_;
  std::unordered_map<const Value*, Value*>& values_;
  const LoweringOptions& options_;
  std::vector<std::string>& inferred_;
  std::vector<Node*> added_;
  std::unordered_set<const Value*> bound_;
  std::map<size_t, Value*> results_;
};

using LowerFn = void (*)(OpLowering&);
using LoweringTable = std::map<std::string, LowerFn>;

// One per family (ge_nn_lowering.cpp, ge_tensor_lowering.cpp, ge_math_lowering.cpp).
void addNnLowerings(LoweringTable& t);
void addTensorLowerings(LoweringTable& t);
void addMathLowerings(LoweringTable& t);

// Attribute helpers for the lowering functions.
NamedAttribute intAttr(const std::string& name, int64_t v);
NamedAttribute floatAttr(const std::string& name, float v);
NamedAttribute intsAttr(const std::string& name, std::vector<int64_t> v);
NamedAttribute stringAttr(const std::string& name, std::string v);

}  // namespace kiln::geops
