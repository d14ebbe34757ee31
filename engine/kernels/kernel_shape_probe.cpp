#include "kernels/kernel_shape_probe.h"

#include <vector>

#include "kernels/kernel.h"
#include "ir/graph.h"

namespace kiln {

bool probeOutputTypes(Node& n, int64_t opset, int64_t maxBytes) {
  if (!hasKernel(n)) return false;
  std::vector<Tensor> held;
  held.reserve(n.numInputs());
  std::vector<const Tensor*> inputs;
  int64_t bytes = 0;
  for (const Value* v : n.inputs()) {
    if (!v) {
      inputs.push_back(nullptr);
      continue;
    }
    if (const Tensor* c = v->constant()) {
      inputs.push_back(c);
      continue;
    }
    const ValueType& t = v->type();
    if (!t.isTensor() || t.dtype == DType::Undefined || t.dtype == DType::String || !t.shape.isStatic()) return false;
    const auto numel = t.shape.numel();
    if (!numel) return false;
    const int64_t size = *numel * static_cast<int64_t>(dtypeSize(t.dtype));
    if (size < 0 || (bytes += size) > maxBytes) return false;
    held.push_back(Tensor::fromBytes(t.dtype, *t.shape.staticExtents(), std::string(size_t(size), '\0')));
    inputs.push_back(&held.back());
  }
  std::vector<Tensor> outputs;
  try {
    KernelLimits limits;
    limits.maxOutputBytes = maxBytes;
    limits.opset = opset;
    outputs = evaluateNode(n, inputs, limits);
  } catch (const std::exception&) {
    return false;  // a kernel that refuses zeros (or the sizes) says nothing about the shapes
  }
  if (outputs.empty()) return false;  // declined
  for (size_t i = 0; i < n.numOutputs() && i < outputs.size(); ++i) {
    Value* o = n.output(i);
    if (!o || !outputs[i].valid()) continue;
    ValueType t = ValueType::tensor(outputs[i].dtype(), Shape::ofStatic(outputs[i].dims()));
    if (!(t == o->type())) o->setType(std::move(t));
  }
  return true;
}

}  // namespace kiln
