#include "fusion/rules/norm_match.h"

#include <algorithm>

#include "ir/fused_node.h"
#include "ir/graph.h"
#include "ir/opdefs/op_registry.h"
#include "ir/tensor.h"
#include "passes/constant_value.h"

namespace kiln {

std::optional<int64_t> trailingReduceAxis(const Node& reduce, int64_t rank) {
  if (reduce.opType() != "ReduceMean" || !reduce.domain().empty() || reduce.attrInt("keepdims", 1) != 1)
    return std::nullopt;
  std::vector<int64_t> axes = reduce.attrInts("axes");
  if (axes.empty() && reduce.numInputs() > 1) {  // opset 18: axes as a constant input
    const Tensor* t = constantValueOf(reduce.input(1));
    if (!t) return std::nullopt;
    axes = t->toInt64();
  }
  // No axes at all means every axis (unless opset 18's noop_with_empty_axes makes it a no-op).
  if (axes.empty() && reduce.numInputs() < 2 && reduce.attrInt("noop_with_empty_axes", 0) == 0)
    return rank > 0 ? std::optional<int64_t>(0) : std::nullopt;
  if (axes.empty() || rank <= 0) return std::nullopt;
  for (auto& a : axes) {
    if (a < 0) a += rank;
    if (a < 0 || a >= rank) return std::nullopt;
  }
  std::sort(axes.begin(), axes.end());
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] != rank - static_cast<int64_t>(axes.size() - i)) return std::nullopt;
  return axes.front();
}

Value* otherBinaryInput(const Node& node, const Value* v) {
  if (node.numInputs() != 2) return nullptr;
  if (node.input(0) == v) return node.input(1);
  if (node.input(1) == v) return node.input(0);
  return nullptr;
}

std::optional<std::vector<int64_t>> trailingDims(const Shape& shape, int64_t axis) {
  if (!shape.rankKnown()) return std::nullopt;
  std::vector<int64_t> dims;
  for (auto i = static_cast<size_t>(axis); i < shape.rank(); ++i) {
    if (!shape[i].isStatic()) return std::nullopt;
    dims.push_back(shape[i].value);
  }
  return dims;
}

bool fitsNormalisedDims(const Value* p, const std::vector<int64_t>& normDims) {
  const Tensor* t = constantValueOf(p);
  if (!t) return false;
  if (t->numel() == 1) return true;
  const auto& d = t->dims();
  if (d.size() < normDims.size()) return false;
  for (size_t i = 0; i + normDims.size() < d.size(); ++i)
    if (d[i] != 1) return false;
  return std::equal(normDims.begin(), normDims.end(), d.end() - static_cast<std::ptrdiff_t>(normDims.size()));
}

Node* fuseNorm(const std::string& opType, const std::vector<Node*>& group, std::vector<Value*> inputs, Value* out,
               int64_t axis, float epsilon, const std::string& rule) {
  while (!inputs.empty() && !inputs.back()) inputs.pop_back();
  FusedNodeSpec spec;
  spec.opType = opType;
  spec.domain = std::string(kKilnDomain);
  spec.inputs = std::move(inputs);
  spec.outputs = {out};
  spec.attrs = {{"axis", Attribute(axis)}, {"epsilon", Attribute(epsilon)}};
  return fuseNodes(group, spec, rule);
}


std::optional<MeanSquare> matchMeanSquarePlusEps(const Value* v) {
  MeanSquare m;
  if (!hasSingleUse(v)) return std::nullopt;
  m.addEps = producerOfType(v, "Add");
  if (m.addEps) {
    const Value* epsValue = nullptr;
    for (size_t side = 0; side < 2 && !m.mean; ++side)
      if (Node* r = producerOfType(m.addEps->input(side), "ReduceMean")) {
        m.mean = r;
        epsValue = m.addEps->input(1 - side);
      }
    const Tensor* eps = epsValue ? constantValueOf(epsValue) : nullptr;
    if (!eps || eps->numel() != 1) return std::nullopt;
    m.epsilon = static_cast<float>(eps->toDouble().at(0));
  } else {
    // An epsilon of 0 is gone after AlgebraicSimplification drops the "+ 0": the mean feeds the root directly.
    m.mean = producerOfType(v, "ReduceMean");
  }
  if (!m.mean || !hasSingleUse(m.mean->output(0))) return std::nullopt;
  m.square = m.mean->input(0) ? m.mean->input(0)->producer() : nullptr;
  if (!m.square || !hasSingleUse(m.mean->input(0))) return std::nullopt;
  m.squared = m.square->input(0);
  const bool isPow = m.square->hasQualifiedType("Pow") && isConstantFilledWith(m.square->input(1), 2.0);
  const bool isMul = m.square->hasQualifiedType("Mul") && m.square->input(1) == m.squared;
  if (!m.squared || (!isPow && !isMul)) return std::nullopt;
  return m;
}

std::vector<Node*> MeanSquare::nodes() const {
  if (!addEps) return {square, mean};
  return {square, mean, addEps};
}

Value* absorbParameter(Value*& out, std::vector<Node*>& group, const char* opType,
                       const std::vector<int64_t>& normDims) {
  if (!hasSingleUse(out)) return nullptr;
  Node* n = out->uses().front().node;
  if (!n->hasQualifiedType(opType)) return nullptr;
  Value* p = otherBinaryInput(*n, out);
  if (!p || !fitsNormalisedDims(p, normDims)) return nullptr;
  group.push_back(n);
  out = n->output(0);
  return p;
}

}  // namespace kiln
