#include "passes/prepare/dimension_compute.h"

#include <algorithm>

#include "ir/graph.h"
#include "passes/prepare/fold_support.h"

namespace kiln {
namespace {

// The dims Shape(start, end) selects, or nullopt when one of them is not static.
std::optional<std::vector<int64_t>> selectedDims(const Node& node, const Shape& shape) {
  const int64_t rank = static_cast<int64_t>(shape.rank());
  auto clampIndex = [rank](int64_t i) { return std::clamp(i < 0 ? i + rank : i, int64_t{0}, rank); };
  const int64_t start = clampIndex(node.attrInt("start", 0));
  const int64_t end = clampIndex(node.attrInt("end", rank));
  std::vector<int64_t> dims;
  for (int64_t i = start; i < end; ++i) {
    const Dim& d = shape[static_cast<size_t>(i)];
    if (!d.isStatic()) return std::nullopt;
    dims.push_back(d.value);
  }
  return dims;
}

class DimensionCompute final : public NodePass {
 public:
  std::string name() const override { return "DimensionCompute"; }

 protected:
  bool visit(Node& node, PassContext&, NodeWorklist& work, PassResult& result) override {
    const bool isShape = node.opType() == "Shape";
    if ((!isShape && node.opType() != "Size") || !isOnnxDomain(node)) return false;
    Value* in = node.input(0);
    Value* out = node.output(0);
    if (!in || !out || node.numOutputs() != 1) return false;
    if (!out->hasUses() && !out->isGraphOutput()) return false;  // dead code: nothing to gain
    const ValueType& t = in->type();
    if (!t.isTensor() || !t.shape.rankKnown()) return false;
    Tensor value;
    if (isShape) {
      const auto dims = selectedDims(node, t.shape);
      if (!dims) return false;
      value = Tensor::fromVector(DType::Int64, {static_cast<int64_t>(dims->size())}, *dims);
    } else {
      const auto n = t.shape.numel();  // nullopt when symbolic or overflowing
      if (!n) return false;
      value = Tensor::fromVector<int64_t>(DType::Int64, {}, {*n});
    }
    replaceWithInitializer(out, std::move(value), work);
    node.graph()->eraseNode(&node);
    eraseIfDeadInitializer(in);  // Shape of a constant: the constant may now be unused
    result.add("shapes_computed");
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> makeDimensionComputePass() { return std::make_unique<DimensionCompute>(); }

}  // namespace kiln
