#pragma once
// The constant data behind a value, if any: an initializer, or the output of a Constant node (its `value` tensor).
namespace kiln {

class Tensor;
class Value;

const Tensor* constantValueOf(const Value* v);
// True when v is constant and every element equals `x` (any numeric dtype).
bool isConstantFilledWith(const Value* v, double x);

}  // namespace kiln
