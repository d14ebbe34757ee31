// RefineRunningFormat (Stage 2, after precision): picks the NPU layout of every tensor, as GE's format selection does.
//  - Convolutions (Conv, kiln:FusedConv) read and write NC1HWC0 activations and a FRACTAL_Z weight; matrix
//    multiplies (MatMul, Gemm, kiln:FusedMatMul) read and write FRACTAL_NZ. A layout is chosen only when its blocked
//    axes are static (C for NC1HWC0, the last two dims for FRACTAL_NZ); other dims may stay symbolic.
//  - The choice spreads forward through format-agnostic ops (op_traits: element-wise ops whose inputs line up block for
//    block — same blocked axes, other axes equal or broadcast from 1 — or are scalar constants; the pools and the
//    per-channel norms the AI Core runs on NC1HWC0; Concat along an axis the blocks do not split, or along C in whole
//    C0 blocks), so a ResNet stays in 5HD from its first convolution to the flatten before the classifier and an
//    Inception block's branches are joined without leaving 5HD.
//  - Where producer and consumer disagree a kiln:TransData is inserted (one per value and target layout), also back to
//    the logical layout before graph outputs, subgraph captures and every op that needs it (Reshape, Concat...).
//    Constants are converted offline instead: the initializer itself is re-laid-out (kernels/transdata.h),
//    padding included.
// A blocked value's shape is its physical shape, so byte sizes include the C0 / 16 padding. InferShape must not run
// after this pass (ONNX inference knows nothing of physical shapes).
// Counters: transdata_inserted, weights_relaid, nodes_5hd, nodes_nz, nodes_following.
#include <map>
#include <unordered_map>

#include "kernels/transdata.h"
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

// The same elements under other dims (same count): [C] read as [C, 1, 1], a constant padded to rank 4.
Tensor withDims(const Tensor& t, std::vector<int64_t> dims) {
  std::string bytes(reinterpret_cast<const char*>(t.data()), t.byteSize());
  return Tensor::fromBytes(t.dtype(), std::move(dims), std::move(bytes));
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
    restoreAtBoundaries();
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
    if (role == FormatRole::Conv5HD)
      done = anchor(n, Format::NC1HWC0, Format::FRACTAL_Z, "NC1HWC0, weight FRACTAL_Z (conv)");
    if (role == FormatRole::MatMulNZ) done = anchor(n, Format::FRACTAL_NZ, Format::FRACTAL_NZ, "FRACTAL_NZ (matmul)");
    if (role == FormatRole::Elementwise || role == FormatRole::Pool5HD || role == FormatRole::Concat ||
        role == FormatRole::Norm5HD)
      done = follow(n, role);
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
    // Conv's and MatMul's T is one element type for data, weight and result; a file that breaks that is left alone.
    if (w->type().dtype != x->type().dtype || y->type().dtype != x->type().dtype) return false;
    for (size_t i = 1; i < n.numOutputs(); ++i)
      if (n.output(i)) return false;
    if (!canHold(x, data) || !canHold(w, weight)) return false;
    const auto yPhys = physicalShape(y->type().shape, data, elementBytes(y));
    if (!yPhys) return false;
    g_.setNodeInput(&n, 0, toFormat(x, data, &n));
    g_.setNodeInput(&n, 1, toFormat(n.input(1), weight, &n));
    // A later input of the result's own shape and type is a residual added to it (FusedConv's Z): the kernel reads
    // it block for block with the result, so it comes in `data` too. Bias and the rest stay logical.
    const Shape& yShape = y->type().shape;
    for (size_t i = 2; i < n.numInputs(); ++i) {
      Value* v = n.input(i);
      if (!v) continue;
      const Shape& shape = logical_.count(v) ? logical_.at(v).shape : v->type().shape;
      if (shape == yShape && v->type().dtype == y->type().dtype && canHold(v, data))
        g_.setNodeInput(&n, i, toFormat(v, data, &n));
      else if (logical_.count(v))
        g_.setNodeInput(&n, i, toLogical(v, &n));
    }
    makeBlocked(y, data, *yPhys);
    n.setAnnotation("format", why);
    r_.add(data == Format::NC1HWC0 ? "nodes_5hd" : "nodes_nz");
    return true;
  }

  // Can v be presented in f (already is, or its logical shape converts; a weight layout needs a static shape)?
  bool canHold(Value* v, Format f) const {
    if (v->type().format == f) return logical_.count(v) > 0;
    const Shape& shape = logical_.count(v) ? logical_.at(v).shape : v->type().shape;
    // Blocked by someone else (an imported layout): its origin shape is unknown.
    if (!logical_.count(v) && isBlockedFormat(v->type().format)) return false;
    return physicalShape(shape, f, elementBytes(v)).has_value();
  }

  // Does an input of logical shape `in` line up block for block with the output `out` in layout f? The blocked axes
  // must be equal (C for 5HD, the last two dims for NZ), the others equal or 1 (a broadcast); along a Concat axis
  // anything goes, and a Concat along C needs whole C0 blocks (no padding inside the result).
  static bool blocksAlign(Format f, const Shape& in, const Shape& out, int64_t concatAxis, int64_t c0) {
    if (!in.rankKnown() || in.rank() != out.rank()) return false;
    const size_t rank = in.rank();
    for (size_t a = 0; a < rank; ++a) {
      const bool blocked = f == Format::NC1HWC0 ? a == 1 : a + 2 >= rank;
      if (static_cast<int64_t>(a) == concatAxis) {
        if (blocked && (f != Format::NC1HWC0 || !in[a].isStatic() || in[a].value % c0 != 0)) return false;
        continue;
      }
      if (!(in[a] == out[a]) && !(!blocked && in[a].isStatic() && in[a].value == 1)) return false;
    }
    return true;
  }

  // An agnostic op takes the layout of its blocked inputs when they line up (blocksAlign; scalar constants broadcast
  // in any layout). Pools and per-channel norms need one NC1HWC0 data input; Concat joins blocked inputs.
  bool follow(Node& n, FormatRole role) {
    Value* y = n.output(0);
    if (!fixedSizeTensor(y)) return false;
    for (size_t i = 1; i < n.numOutputs(); ++i)
      if (Value* o = n.output(i); o && (o->hasUses() || o->isGraphOutput())) return false;
    const size_t dataInputs = role == FormatRole::Norm5HD ? 1 : n.numInputs();
    Value* lead = nullptr;
    std::vector<size_t> channelConstants;  // per-channel constant operands of an element-wise op
    for (size_t i = 0; i < dataInputs; ++i) {
      Value* v = n.input(i);
      if (!v) continue;
      if (logical_.count(v)) {
        if (lead && v->type().format != lead->type().format) return false;
        if (!lead) lead = v;
      } else if (role == FormatRole::Elementwise && v->constant()) {
        if (!isScalarConstant(v)) channelConstants.push_back(i);
      } else if (role == FormatRole::Concat || !isScalarConstant(v)) {
        return false;
      }
    }
    if (!lead) return false;
    const Format f = lead->type().format;
    if (!channelConstants.empty() && f != Format::NC1HWC0) return false;
    if ((role == FormatRole::Pool5HD || role == FormatRole::Norm5HD) && f != Format::NC1HWC0) return false;
    const Shape& out = y->type().shape;
    const auto yPhys = physicalShape(out, f, elementBytes(y));
    if (!yPhys) return false;
    int64_t axis = -1;
    if (role == FormatRole::Concat) {
      axis = n.attrInt("axis", 0);
      if (axis < 0) axis += static_cast<int64_t>(out.rank());
      if (axis < 0 || axis >= static_cast<int64_t>(out.rank())) return false;
    }
    const int64_t c0 = blockC0(elementBytes(y));
    for (size_t i = 0; i < dataInputs; ++i) {
      Value* v = n.input(i);
      if (!v || !logical_.count(v)) continue;
      const Shape& in = logical_.at(v).shape;
      // The input's blocks must be the ones the output's element size makes (a Cast to int8 would re-block).
      if (physicalShape(in, f, elementBytes(y)) != v->type().shape) return false;
      if (role == FormatRole::Pool5HD) {
        if (in.rank() != 4 || !(in[1] == out[1])) return false;
      } else if (!blocksAlign(f, in, out, axis, c0)) {
        return false;
      }
    }
    std::vector<std::pair<size_t, Blocked>> constants;
    for (size_t i : channelConstants) {
      Blocked b = in5hd(n.input(i), *n.input(i)->constant(), out);
      if (!b.valid()) return false;
      constants.emplace_back(i, std::move(b));
    }
    for (auto& [i, b] : constants) g_.setNodeInput(&n, i, storeIn5hd(n.input(i), std::move(b)));
    if (role == FormatRole::Norm5HD && !channelParamsTo5hd(n, out)) return false;
    if (role == FormatRole::Concat) n.setAttr("axis", Attribute(axis));  // same axis number in the blocked layout
    makeBlocked(y, f, *yPhys);
    n.setAnnotation("format", std::string(formatName(f)) + " (follows its input)");
    r_.add("nodes_following");
    return true;
  }

  // A constant operand that broadcasts per channel ([C,1,1], [1,C,1,1], [1,C,H,W]...: C equal to the output's, other
  // dims equal or 1) broadcasts the same way in NC1HWC0 once re-laid-out: [1, C1, 1, 1, C0]. Invalid otherwise. A
  // vector broadcasts along W, not C, so it stays logical: nchwPlacement (how the emulator reads the copy back)
  // reserves rank 1 for a norm's per-channel parameters. The copy made for an earlier reader of the same constant
  // is taken again (DenseNet's shared norm parameters were re-laid-out once per reader, then thrown away).
  struct Blocked {
    Value* made = nullptr;  // the copy an earlier reader stored
    Tensor fresh;           // or the re-laid-out tensor to store
    bool valid() const { return made || fresh.valid(); }
  };
  Blocked in5hd(Value* p, const Tensor& t, const Shape& out) {
    if (t.dims().size() > 4 || t.dims().size() < 2 || out.rank() != 4 || !out[1].isStatic()) return {};
    const std::vector<int64_t> d = nchwPlacement(t.dims());
    if (d[1] != out[1].value) return {};
    for (size_t a : {size_t{0}, size_t{2}, size_t{3}})
      if (d[a] != 1 && !(out[a].isStatic() && out[a].value == d[a])) return {};
    if (auto it = converted_.find({p, Format::NC1HWC0}); it != converted_.end()) return {it->second, {}};
    return {nullptr, transDataTensor(withDims(t, d), Format::ND, Format::NC1HWC0)};
  }

  // The NC1HWC0 copy of constant p (one per constant, however many nodes read it).
  Value* storeIn5hd(Value* p, Blocked b) {
    if (b.made) return b.made;
    // (One node may read a constant twice: the first input stored its copy.)
    if (auto it = converted_.find({p, Format::NC1HWC0}); it != converted_.end()) return it->second;
    r_.add("weights_relaid");
    return converted_[{p, Format::NC1HWC0}] =
               constants_.add(g_, p, std::move(b.fresh), Format::NC1HWC0, "_NC1HWC0");
  }

  // BatchNorm / InstanceNorm on NC1HWC0 read their [C] parameters as [1, C1, 1, 1, C0] (as GE's BNInference does):
  // constants re-laid-out offline, zero padded. Any other parameter keeps the node logical.
  bool channelParamsTo5hd(Node& n, const Shape& out) {
    std::vector<std::pair<size_t, Blocked>> params;
    for (size_t i = 1; i < n.numInputs(); ++i) {
      Value* p = n.input(i);
      if (!p) continue;
      const Tensor* c = p->constant();
      if (!c || c->dims().size() != 1) return false;
      // A norm's [C] is per channel (not numpy's trailing axis): nchwPlacement reads it as [1, C, 1, 1].
      Blocked b = in5hd(p, withDims(*c, nchwPlacement(c->dims())), out);
      if (!b.valid()) return false;
      params.emplace_back(i, std::move(b));
    }
    for (auto& [i, b] : params) g_.setNodeInput(&n, i, storeIn5hd(n.input(i), std::move(b)));
    return true;
  }

  void makeBlocked(Value* v, Format f, const Shape& physical) {
    logical_[v] = Logical{v->type().shape, v->type().format};
    v->setType(v->type().storedAs(f, physical));
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
    Node* t = insertConversion(g_, "TransData", "kiln", v, "TransData_" + to, v->name() + "_" + to,
                               before);
    t->setAttr("src_format", Attribute(std::string(formatName(src))));
    t->setAttr("dst_format", Attribute(to));
    t->setAttr("origin_shape", Attribute(originExtents(logical)));
    // From a blocked layout the logical type is the one recorded; into one, v's own type becomes the origin.
    ValueType from = v->type();
    if (isBlockedFormat(src)) {
      from.shape = logical;
      from.format = dst;
    }
    t->output(0)->setType(from.storedAs(dst, outShape));
    m_.opsets.emplace("kiln", 1);
    r_.add("transdata_inserted");
    return t->output(0);
  }

  // Subgraph captures and graph outputs leave in their logical layout; an output's conversion takes its name.
  void restoreAtBoundaries() {
    std::vector<Value*> blocked;
    for (const auto& [v, l] : logical_) blocked.push_back(v);
    rewireSubgraphUses(g_, blocked, [&](Value* v, Node* before) { return toLogical(v, before); });
    replaceGraphOutputs(
        g_, [&](Value* v) { return logical_.count(v) > 0 && !v->constant(); },
        [&](Value* v) { return toLogical(v, nullptr); },
        [](Value* v) { return "_" + std::string(formatName(v->type().format)); });
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
