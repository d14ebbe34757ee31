#pragma once
// Nodes of a model's top-level graph whose every input is a constant (an initializer, or the output of another such
// node): their outputs are the same on every run, so the reference run computes them once, before its clock starts,
// as ONNX Runtime folds them when it creates a session. The values are the reference kernels' own results on the
// same operands (nothing is approximated); the run skips these nodes and reads the values instead.
// Exporters write such subgraphs for weights and shapes (a ConstantOfShape per weight, a Shape -> Gather -> Concat
// on static shapes); light_inception_v2 builds all its weights this way, a tenth of its run.
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/tensor.h"

namespace kiln {

class Graph;
class Node;
class Value;
class ReferenceExecutor;

struct ConstantNodes {
  std::unordered_set<const Node*> nodes;
  std::unordered_map<const Value*, Tensor> values;  // their outputs
  double ms = 0;  // the time computing them took
};

// Computes g's constant nodes with `exec`'s kernels. Random ops (RandomNormal, Bernoulli...), Dropout, control flow
// and nodes whose kernel fails are left to the run (which reports a failure where it happens).
std::shared_ptr<const ConstantNodes> computeConstantNodes(const Graph& g, const ReferenceExecutor& exec);

}  // namespace kiln
