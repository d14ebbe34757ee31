#pragma once
// What the fusion suites share: fp32 types and constants for small hand-built graphs, and the built-in rules run
// as GraphFusion runs them.
#include <vector>

#include "kernels/kernel.h"
#include "fusion/rules/builtin_rules.h"
#include "fusion/graph_fusion_pass.h"
#include "support/pass_test_support.h"

namespace kiln::testing {

inline ValueType f32(const std::vector<int64_t>& dims) {
  return ValueType::tensor(DType::Float, Shape::ofStatic(dims));
}

inline Tensor floats(std::vector<int64_t> dims, const std::vector<double>& v) {
  return convertTensor(Tensor::fromVector(DType::Double, std::move(dims), v), DType::Float);
}

inline PassResult runFusion(Model& m, const Options& options = Options()) {
  return runPass(*makeGraphFusionPass(builtinFusionRules()), m, options);
}

}  // namespace kiln::testing
