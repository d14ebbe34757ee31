// FlattenGemmFusion: a classifier on a pooled activation, as CNN exports write it —
//   GlobalAveragePool -> Flatten / Reshape (x [N, C, 1, 1] -> [N, C]) -> Gemm(·, W, bias) or MatMul(·, W)
//     ->  Conv(x, W as [M, C, 1, 1], bias) -> Reshape([N, M, 1, 1] -> [N, M])          (the same values)
// A matrix product of a [N, C, 1, 1] activation is a 1x1 convolution. GE runs it as FullyConnection on the NC1HWC0
// activation the pooling leaves (ResNet-50's Build dump: no layout conversion until the end); without this rewrite
// Kiln flattened to ND and converted to FRACTAL_NZ for the matrix product and back, two TransData more than GE
// (docs/ge-vs-kiln.md). As a convolution it stays in NC1HWC0 with a FRACTAL_Z weight, and only the final Reshape to
// [N, M] needs the logical layout. Only static shapes with H = W = 1, alpha = beta = 1, transA = 0, a constant
// weight (transposed here when transB = 0) and a constant 1-D bias (or none).
#include "fusion/fusion_rule.h"
#include "fusion/match_helpers.h"
#include "fusion/rules/builtin_rules.h"
#include "ir/fused_node.h"
#include "ir/graph.h"
#include "kernels/transdata.h"
#include "util/json.h"

namespace kiln {
namespace {

class FlattenGemmFusion final : public FusionRule {
 public:
  std::string name() const override { return "FlattenGemmFusion"; }
  std::vector<std::string> anchorTypes() const override { return {"Gemm", "MatMul"}; }

  Node* apply(Node& mm, PassContext&) override {
    const bool gemm = mm.opType() == "Gemm";
    if (!mm.domain().empty()) return nullptr;
    if (gemm && (mm.attrInt("transA", 0) != 0 || mm.attrFloat("alpha", 1.0f) != 1.0f || mm.attrFloat("beta", 1.0f) != 1.0f))
      return nullptr;
    Value* flat = mm.input(0);
    Node* flatten = flat ? flat->producer() : nullptr;
    if (!flatten || !flatten->domain().empty() || !hasSingleUse(flat)) return nullptr;
    if (flatten->opType() == "Flatten" ? flatten->attrInt("axis", 1) != 1 : flatten->opType() != "Reshape") return nullptr;
    Value* x = flatten->input(0);
    const auto xs = x ? x->type().shape.staticExtents() : std::nullopt;
    const auto fs = flat->type().shape.staticExtents();
    if (!xs || xs->size() != 4 || (*xs)[2] != 1 || (*xs)[3] != 1 || !fs || *fs != std::vector<int64_t>{(*xs)[0], (*xs)[1]})
      return nullptr;
    const int64_t n = (*xs)[0], c = (*xs)[1];
    Value* w = mm.input(1);
    const Tensor* wt = w ? w->constant() : nullptr;
    if (!wt || wt->dims().size() != 2 || wt->dtype() != x->type().dtype) return nullptr;
    const bool transB = gemm && mm.attrInt("transB", 0) != 0;
    if (wt->dims()[transB ? 1 : 0] != c) return nullptr;
    const int64_t m = wt->dims()[transB ? 0 : 1];
    Value* bias = gemm ? mm.input(2) : nullptr;
    if (bias) {
      const Tensor* bt = bias->constant();
      if (!bt || bt->dims() != std::vector<int64_t>{m}) return nullptr;  // a broadcast bias of another shape: not here
    }
    Value* y = mm.output(0);
    const auto ys = y ? y->type().shape.staticExtents() : std::nullopt;
    if (!ys || *ys != std::vector<int64_t>{n, m}) return nullptr;

    Graph& g = *mm.graph();
    // The weight as a 1x1 filter [M, C, 1, 1].
    Tensor filter = transB ? *wt : permuteTensor(*wt, {1, 0});
    if (!filter.valid()) return nullptr;
    filter = Tensor::fromBytes(filter.dtype(), {m, c, 1, 1},
                               std::string(reinterpret_cast<const char*>(filter.data()), filter.byteSize()));
    Value* w4 = g.addInitializer(w->name() + "_1x1", filter);
    w4->setType(ValueType::tensor(filter.dtype(), Shape::ofStatic({m, c, 1, 1})));
    std::vector<Value*> ins = {x, w4};
    if (bias) ins.push_back(bias);
    Node* conv = g.addNode("Conv", ins, {y->name() + "_1x1"}, mm.name(), "", &mm);
    conv->setAttr("kernel_shape", Attribute(std::vector<int64_t>{1, 1}));
    conv->output(0)->setType(ValueType::tensor(y->type().dtype, Shape::ofStatic({n, m, 1, 1})));
    Value* shape = g.addInitializer(y->name() + "_shape", Tensor::fromVector(DType::Int64, {2}, std::vector<int64_t>{n, m}));
    shape->setType(ValueType::tensor(DType::Int64, Shape::ofStatic({2})));
    Node* reshape = g.addNode("Reshape", {conv->output(0), shape}, {y->name() + "_flat"}, mm.name() + "/Reshape", "", &mm);
    reshape->output(0)->setType(y->type());
    // Names of the original nodes, in order, for the inspector and the .om's _datadump_original_op_names.
    Json names = Json::array();
    for (const Node* o : {flatten, &mm}) names.push(o->name());
    const std::string replaced = std::to_string(flatten->id()) + "," + std::to_string(mm.id());
    const std::string yName = y->name();
    g.replaceAllUsesWith(y, reshape->output(0));
    g.eraseNode(&mm);
    g.eraseNode(flatten);
    if (!w->hasUses() && !w->isGraphOutput() && !w->isGraphInput()) g.eraseValue(w);  // its 1x1 copy replaces it
    reshape->output(0)->setName(yName);
    conv->setAnnotation("fusion.rule", name());
    conv->setAnnotation("fusion.replaced", replaced);
    conv->setAnnotation("fusion.original_names", names.dump());
    conv->setAnnotation("fusion.hbm_bytes_saved", "0");
    return conv;
  }
};

}  // namespace

std::shared_ptr<FusionRule> makeFlattenGemmFusion() { return std::make_shared<FlattenGemmFusion>(); }

}  // namespace kiln
