#include "passes/prepare/dimension_compute.h"

#include <algorithm>

#include "ir/graph.h"
#include "passes/constant_value.h"
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
    if (node.opType() == "Gather" && isOnnxDomain(node)) return gatherOfShape(node, work, result);
    if (node.opType() == "Slice" && isOnnxDomain(node)) return sliceOfShape(node, work, result);
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

 private:
  // Slice(Shape(x), a, b) with constant bounds (x.shape[-1:]) over static dims is a constant too.
  static bool sliceOfShape(Node& node, NodeWorklist& work, PassResult& result) {
    Value* shapeOut = node.input(0);
    Node* shape = shapeOut ? shapeOut->producer() : nullptr;
    Value* out = node.output(0);
    if (!shape || shape->opType() != "Shape" || !isOnnxDomain(*shape) || !out || node.numInputs() < 3) return false;
    if (!out->hasUses() && !out->isGraphOutput()) return false;
    const Tensor* st = constantValueOf(node.input(1));
    const Tensor* en = constantValueOf(node.input(2));
    const Tensor* sp = node.input(4) ? constantValueOf(node.input(4)) : nullptr;
    if (!st || !en || st->numel() != 1 || en->numel() != 1 || (node.input(4) && (!sp || sp->numel() != 1))) return false;
    const Value* x = shape->input(0);
    if (!x || !x->type().shape.rankKnown()) return false;
    const int64_t rank = static_cast<int64_t>(x->type().shape.rank());
    auto clampIndex = [rank](int64_t i) { return std::clamp(i < 0 ? i + rank : i, int64_t{0}, rank); };
    const int64_t s0 = clampIndex(shape->attrInt("start", 0));
    const int64_t len = clampIndex(shape->attrInt("end", rank)) - s0;
    const int64_t step = sp ? sp->toInt64()[0] : 1;
    if (step != 1) return false;  // reversed shape slices are rare; leave them to folding
    auto clampLen = [len](int64_t i) { return std::clamp(i < 0 ? i + len : i, int64_t{0}, len); };
    const int64_t b = clampLen(st->toInt64()[0]), e = clampLen(en->toInt64()[0]);
    std::vector<int64_t> picked;
    for (int64_t k = b; k < e; ++k) {
      const Dim& d = x->type().shape[static_cast<size_t>(s0 + k)];
      if (!d.isStatic()) return false;
      picked.push_back(d.value);
    }
    replaceWithInitializer(out, Tensor::fromVector(DType::Int64, {static_cast<int64_t>(picked.size())}, picked), work);
    node.graph()->eraseNode(&node);
    result.add("dims_sliced");
    return true;
  }

  // Gather(Shape(x), k): exports read one dim of a tensor whose other dims are symbolic (x.size(2) of a
  // [batch, seq, 768] tensor). When the dims it picks are static, the Gather is a constant.
  static bool gatherOfShape(Node& node, NodeWorklist& work, PassResult& result) {
    Value* shapeOut = node.input(0);
    Node* shape = shapeOut ? shapeOut->producer() : nullptr;
    const Tensor* idx = constantValueOf(node.input(1));
    Value* out = node.output(0);
    if (!shape || shape->opType() != "Shape" || !isOnnxDomain(*shape) || !idx || !out || node.attrInt("axis", 0) != 0)
      return false;
    if (!out->hasUses() && !out->isGraphOutput()) return false;
    const Value* x = shape->input(0);
    if (!x || !x->type().shape.rankKnown()) return false;
    const int64_t rank = static_cast<int64_t>(x->type().shape.rank());
    auto clampIndex = [rank](int64_t i) { return std::clamp(i < 0 ? i + rank : i, int64_t{0}, rank); };
    const int64_t start = clampIndex(shape->attrInt("start", 0));
    const int64_t len = clampIndex(shape->attrInt("end", rank)) - start;
    std::vector<int64_t> picked;
    for (int64_t k : idx->toInt64()) {
      if (k < 0) k += len;
      if (k < 0 || k >= len) return false;
      const Dim& d = x->type().shape[static_cast<size_t>(start + k)];
      if (!d.isStatic()) return false;
      picked.push_back(d.value);
    }
    replaceWithInitializer(out, Tensor::fromVector(DType::Int64, idx->dims(), picked), work);
    node.graph()->eraseNode(&node);
    result.add("dims_gathered");
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> makeDimensionComputePass() { return std::make_unique<DimensionCompute>(); }

}  // namespace kiln
