// RefineRunningFormat (Stage 2, after precision): picks the NPU layout of every tensor, as GE's format selection does.
//  - Convolutions (Conv, kiln:FusedConv) read and write NC1HWC0 activations and a FRACTAL_Z weight; matrix
//    multiplies (MatMul, Gemm, kiln:FusedMatMul) read and write FRACTAL_NZ. A layout is chosen only when its blocked
//    axes are static (C for NC1HWC0, the last two dims for FRACTAL_NZ); other dims may stay symbolic.
//  - The choice spreads forward through format-agnostic ops (op_traits: element-wise ops whose inputs share layout and
//    shape or are scalar constants, and the pools the AI Core runs on NC1HWC0), so a ResNet stays in 5HD from its
//    first convolution to the flatten before the classifier.
//  - Where producer and consumer disagree a kiln:TransData is inserted (one per value and target layout), also back to
//    the logical layout before graph outputs, subgraph captures and every op that needs it (Reshape, Concat...).
//    Constants are converted offline instead: the initializer itself is re-laid-out (emulator/kernels/transdata.h),
//    padding included.
// A blocked value's shape is its physical shape, so byte sizes include the C0 / 16 padding. InferShape must not run
// after this pass (ONNX inference knows nothing of physical shapes).
// Counters: transdata_inserted, weights_relaid, nodes_5hd, nodes_nz, nodes_following.
#include <map>
#include <unordered_map>

#include "emulator/kernels/transdata.h"
#include "ir/graph.h"
#include "ir/model.h"
#include "passes/optimize/conversion_support.h"
#include "passes/optimize/op_traits.h"
#include "passes/optimize/optimize_passes.h"

namespace kiln {
namespace {

int elementBytes(const Value* v) { return dtypeSize(v->type().dtype); }

bool fixedSizeTensor(const Value* v) {
  return v && v->type().isTensor() && v->type().shape.rankKnown() && elementBytes(v) > 0;
}

bool isScalarConstant(const Value* v) {
  return v && v->constant() && v->constant()->numel() == 1;
}

// origin_shape of a TransData: the logical extents, -1 where a dim is symbolic (the physical shape keeps it).
std::vector<int64_t> originExtents(const Shape& s) {
  std::vector<int64_t> out;
  for (const Dim& d : s.dims()) out.push_back(d.isStatic() ? d.value : -1);
  return out;
}

class FormatRewriter {
 public:
  FormatRewriter(Model& m, PassResult& r) : m_(m), g_(*m.graph), r_(r) {}

  void run() {
    const auto order = g_.topologicalOrder();
    if (!order) return;  // a cycle: the verifier reports it
    for (Node* n : *order) visit(*n);
    restoreForOtherGraphs();
    restoreGraphOutputs();
    constants_.retire(g_);
    g_.sortTopologically();
  }

 private:
  struct Logical {
    Shape shape;
    Format format;
  };

  void visit(Node& n) {
    const FormatRole role = runsOnAiCore(n, m_.opsetFor(n.domain())) ? formatRole(n) : FormatRole::Logical;
    bool done = false;
    if (role == FormatRole::Conv5HD) done = anchor(n, Format::NC1HWC0, Format::FRACTAL_Z, "NC1HWC0, weight FRACTAL_Z (conv)");
    if (role == FormatRole::MatMulNZ) done = anchor(n, Format::FRACTAL_NZ, Format::FRACTAL_NZ, "FRACTAL_NZ (matmul)");
    if (role == FormatRole::Elementwise || role == FormatRole::Pool5HD) done = follow(n, role);
    if (!done) readLogical(n, 0);
  }

  // Every input from `first` on that is blocked goes back to its logical layout.
  void readLogical(Node& n, size_t first) {
    for (size_t i = first; i < n.numInputs(); ++i)
      if (Value* v = n.input(i); v && logical_.count(v)) g_.setNodeInput(&n, i, toLogical(v, &n));
  }

  // Conv / MatMul: inputs 0 and 1 in `data` and `weight` layouts, output 0 in `data`; the rest stays logical.
  bool anchor(Node& n, Format data, Format weight, const char* why) {
    Value* x = n.input(0);
    Value* w = n.input(1);
    Value* y = n.output(0);
    if (!fixedSizeTensor(x) || !fixedSizeTensor(w) || !fixedSizeTensor(y)) return false;
    for (size_t i = 1; i < n.numOutputs(); ++i)
      if (n.output(i)) return false;
    if (!canHold(x, data) || !canHold(w, weight)) return false;
    const auto yPhys = physicalShape(y->type().shape, data, elementBytes(y));
    if (!yPhys) return false;
    g_.setNodeInput(&n, 0, toFormat(x, data, &n));
    g_.setNodeInput(&n, 1, toFormat(n.input(1), weight, &n));
    readLogical(n, 2);
    makeBlocked(y, data, *yPhys);
    n.setAnnotation("format", why);
    r_.add(data == Format::NC1HWC0 ? "nodes_5hd" : "nodes_nz");
    return true;
  }

  // Can v be presented in f (already is, or its logical shape converts; a weight layout needs a static shape)?
  bool canHold(Value* v, Format f) const {
    if (v->type().format == f) return logical_.count(v) > 0;
    const Shape& shape = logical_.count(v) ? logical_.at(v).shape : v->type().shape;
    if (!logical_.count(v) && isBlockedFormat(v->type().format)) return false;  // blocked by someone else: unknown origin
    return physicalShape(shape, f, elementBytes(v)).has_value();
  }

  // An agnostic op takes the layout of its blocked inputs when they agree (same layout, same physical and logical
  // shape; scalar constants broadcast in any layout). Pools need one NC1HWC0 input.
  bool follow(Node& n, FormatRole role) {
    Value* y = n.output(0);
    if (!fixedSizeTensor(y)) return false;
    for (size_t i = 1; i < n.numOutputs(); ++i)
      if (Value* o = n.output(i); o && (o->hasUses() || o->isGraphOutput())) return false;
    Value* lead = nullptr;
    int data = 0;
    for (Value* v : n.inputs()) {
      if (!v || isScalarConstant(v)) continue;
      ++data;
      if (!logical_.count(v)) return false;
      if (!lead) lead = v;
      else if (v->type().format != lead->type().format || !(v->type().shape == lead->type().shape) ||
               !(logical_.at(v).shape == logical_.at(lead).shape))
        return false;
    }
    if (!lead) return false;
    const Format f = lead->type().format;
    std::optional<Shape> yPhys;
    if (role == FormatRole::Pool5HD) {
      if (data != 1 || f != Format::NC1HWC0) return false;
      yPhys = physicalShape(y->type().shape, f, elementBytes(y));
    } else {
      // Same logical shape as the inputs (no broadcast grows it) and the same blocks for the output's element size.
      if (!(y->type().shape == logical_.at(lead).shape)) return false;
      yPhys = physicalShape(y->type().shape, f, elementBytes(y));
      if (yPhys && !(*yPhys == lead->type().shape)) return false;
    }
    if (!yPhys) return false;
    makeBlocked(y, f, *yPhys);
    n.setAnnotation("format", std::string(formatName(f)) + " (follows its input)");
    r_.add("nodes_following");
    return true;
  }

  void makeBlocked(Value* v, Format f, const Shape& physical) {
    logical_[v] = Logical{v->type().shape, v->type().format};
    ValueType t = v->type();
    t.format = f;
    t.shape = physical;
    v->setType(std::move(t));
  }

  // v presented in layout f: itself, an offline-converted constant, or a TransData placed before `before`.
  Value* toFormat(Value* v, Format f, Node* before) {
    if (v->type().format == f && (logical_.count(v) || !isBlockedFormat(f))) return v;
    if (logical_.count(v)) v = toLogical(v, before);  // between two blocked layouts: through the logical one
    auto key = std::make_pair(v, f);
    if (auto it = converted_.find(key); it != converted_.end()) return it->second;
    Value* out = nullptr;
    if (const Tensor* c = v->constant()) {
      Tensor t = transDataTensor(*c, v->type().format, f);
      if (t.valid()) {
        out = constants_.add(g_, v, std::move(t), f, "_" + std::string(formatName(f)));
        r_.add("weights_relaid");
      }
    }
    if (!out) {
      const Shape phys = *physicalShape(v->type().shape, f, elementBytes(v));
      out = insertTransData(v, v->type().format, f, v->type().shape, phys, before);
    }
    logical_[out] = Logical{v->type().shape, v->type().format};
    converted_[key] = out;
    return out;
  }

  Value* toLogical(Value* v, Node* before) {
    const Logical& l = logical_.at(v);
    auto key = std::make_pair(v, l.format);
    if (auto it = converted_.find(key); it != converted_.end()) return it->second;
    Value* out = insertTransData(v, v->type().format, l.format, l.shape, l.shape, before);
    converted_[key] = out;
    return out;
  }

  Value* insertTransData(Value* v, Format src, Format dst, const Shape& logical, const Shape& outShape, Node* before) {
    const std::string to(formatName(dst));
    Node* t = insertConversion(g_, "TransData", "kiln", v, v->name() + "/TransData_" + to, v->name() + "_" + to, before);
    t->setAttr("src_format", Attribute(std::string(formatName(src))));
    t->setAttr("dst_format", Attribute(to));
    t->setAttr("origin_shape", Attribute(originExtents(logical)));
    ValueType type = v->type();
    type.format = dst;
    type.shape = outShape;
    t->output(0)->setType(std::move(type));
    m_.opsets.emplace("kiln", 1);
    r_.add("transdata_inserted");
    return t->output(0);
  }

  void restoreForOtherGraphs() {
    std::vector<Value*> blocked;
    for (const auto& [v, l] : logical_) blocked.push_back(v);
    for (Value* v : blocked) {
      const std::vector<Use> uses = v->uses();
      for (const Use& u : uses) {
        if (u.node->graph() == &g_) continue;
        g_.setNodeInput(u.node, u.index, toLogical(v, nodeInGraph(g_, u.node)));
      }
    }
  }

  // Outputs leave in their logical layout; the conversion takes the output's name.
  void restoreGraphOutputs() {
    std::vector<Value*> outs = g_.outputs();
    bool changed = false;
    for (Value*& v : outs) {
      if (!logical_.count(v) || v->constant()) continue;
      const std::string name = v->name();
      Value* back = toLogical(v, nullptr);
      v->setName(name + "_" + std::string(formatName(v->type().format)));
      back->setName(name);
      v = back;
      changed = true;
    }
    if (changed) g_.setOutputs(outs);
  }

  Model& m_;
  Graph& g_;
  PassResult& r_;
  ConstantCopies constants_;
  std::unordered_map<Value*, Logical> logical_;  // values in a blocked layout: their logical shape and layout
  std::map<std::pair<Value*, Format>, Value*> converted_;
};

class RefineRunningFormat final : public Pass {
 public:
  std::string name() const override { return "RefineRunningFormat"; }
  PassResult run(PassContext& ctx) override {
    PassResult r;
    FormatRewriter(ctx.model, r).run();
    return r;
  }
};

}  // namespace

std::unique_ptr<Pass> makeRefineRunningFormatPass() { return std::make_unique<RefineRunningFormat>(); }

}  // namespace kiln
