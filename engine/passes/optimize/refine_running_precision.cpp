// RefineRunningPrecision (Stage 2): decides which fp32 computations run in fp16, as ATC's --precision_mode does.
//  - force_fp16 (default): every fp32 tensor an AI Core op computes becomes fp16. Constant weights are converted
//    offline (the initializer itself becomes fp16, no Cast node); graph inputs keep their dtype and are cast right
//    after them; graph outputs keep their declared dtype (cast back before the output); AI CPU / host ops, ops whose
//    element type is set by an attribute and ops without an fp16 kernel stay fp32, with Casts at the boundary.
//  - allow_fp32_to_fp16: fp32 wherever the op supports it; only the cube ops (fp16-only on the cube) narrow.
//  - allow_mix_precision: the white list (op_traits: Conv, MatMul, Gemm, fused conv/matmul/attention) runs fp16, the
//    black list (exp/log/pow, reductions, softmax, the norm family) stays fp32, grey ops follow their producer.
//  - force_fp32, must_keep_origin_dtype: nothing changes.
// Integer and bool tensors are never touched. Each changed node records why in its "precision" annotation.
// Quantized models (ONNX Runtime's dynamic quantization: DynamicQuantizeLinear + ConvInteger/MatMulInteger + Cast +
// Mul by the scales; QDQ): an int32 accumulator cast to float can pass fp16's 65504, and the product of two scales
// (~1e-5) is subnormal in fp16. So, as GE's AscendDequant scales the int32 result in fp32 before it narrows, the
// float form of a wide integer stays fp32 until a Mul/Div scales it, and quantization scales (DynamicQuantizeLinear's
// y_scale and what is computed from scales alone) stay fp32; the dequantized product narrows like any other value.
// Reshape-like ops only relabel their input, in whichever precision it arrives.
// A node with an operand of unknown element type (inference failed upstream) stays fp32: its fp16 inputs are cast
// back, so every operand bound to one type variable keeps one element type.
// Counters: nodes_fp16, nodes_fp32 (kept fp32 next to fp16 producers), nodes_unknown_type (kept fp32 for an operand
// of unknown element type), casts_inserted, weights_converted.
#include <unordered_map>
#include <unordered_set>

#include "kernels/kernel.h"
#include "ir/graph.h"
#include "ir/model.h"
#include "ir/opdefs/op_registry.h"
#include "passes/optimize/conversion_support.h"
#include "passes/optimize/op_traits.h"
#include "passes/optimize/optimize_passes.h"
#include "options/options.h"

namespace kiln {
namespace {

bool isFp32(const Value* v) { return v && v->type().isTensor() && v->type().dtype == DType::Float; }

bool elementTypeUnknown(const Value* v) {
  return v && (!v->type().known() || (v->type().isTensor() && v->type().dtype == DType::Undefined));
}

// An operand whose element type inference could not establish (after an op it cannot infer: a contrib op, an op of a
// later opset, an experimental one), among those that may hold floats. Narrowing the node would cast its known fp32
// operands and leave this one as it arrives — fp32 at run time — or, for an output, make fp16 data its readers still
// take for the file's fp32 (and, not knowing better, would not cast back).
const Value* operandOfUnknownType(const Node& n, int64_t opset) {
  for (size_t i = 0; i < n.numInputs(); ++i)
    if (elementTypeUnknown(n.input(i)) && !fp32OnlyInput(n, i) && mayHoldFloat(n, i, true, opset)) return n.input(i);
  for (size_t i = 0; i < n.numOutputs(); ++i)
    if (elementTypeUnknown(n.output(i)) && mayHoldFloat(n, i, false, opset)) return n.output(i);
  return nullptr;
}

struct Decision {
  bool fp16 = false;
  std::string reason;
  bool unknownType = false;  // kept fp32 because an operand's element type is unknown
};

class PrecisionRewriter {
 public:
  PrecisionRewriter(Model& m, const std::string& mode, PassResult& r) : m_(m), g_(*m.graph), mode_(mode), r_(r) {}

  void run() {
    const auto order = g_.topologicalOrder();
    if (!order) return;  // a cycle: the verifier reports it
    for (Node* n : *order)  // judged before anything changes: mid-pass, a node's inputs are half narrowed
      if (OpRegistry::global().checkSignature(*n, m_.opsetFor(n->domain()))) invalid_.insert(n);
    for (Node* n : *order) visit(*n);
    castBackAtBoundaries();
    constants_.retire(g_);
    g_.sortTopologically();
  }

 private:
  Decision decide(const Node& n) const {
    bool hasFp32 = false;
    for (size_t i = 0; i < n.numInputs(); ++i) hasFp32 = hasFp32 || (isFp32(n.input(i)) && !fp32OnlyInput(n, i));
    for (const Value* o : n.outputs()) hasFp32 = hasFp32 || isFp32(o);
    if (!hasFp32) return {};
    const Value* unknown = operandOfUnknownType(n, m_.opsetFor(n.domain()));
    const auto keptForUnknown = [&] {  // stays as the file wrote it: all its operands as they arrive
      return Decision{false, "fp32 (element type of '" + unknown->name() + "' unknown)", true};
    };
    if (relabelsOnly(n)) {  // no arithmetic: the data keeps the precision it arrives in
      if (!narrowed_.count(n.input(0))) return {};
      return unknown ? keptForUnknown() : Decision{true, "fp16 (follows its input)"};
    }
    if (!runsOnAiCore(n, m_.opsetFor(n.domain()))) {
      const std::string engine = n.annotation("engine");
      return {false, "fp32 (" + (engine.empty() ? std::string("not on the AI Core") : engine) + ")"};
    }
    if (keepsItsDtype(n)) return {false, "fp32 (element type fixed by the op)"};
    if (unknown) return keptForUnknown();
    for (const Value* v : n.inputs())
      if (wide_.count(v)) return {false, "fp32 (an integer accumulator: beyond fp16's range until it is scaled)"};
    if (computesOnlyScales(n)) return {false, "fp32 (a quantization scale: subnormal in fp16)"};
    if (mode_ == "force_fp16") return {true, "fp16 (force_fp16)"};
    if (mode_ == "allow_fp32_to_fp16")
      return cubeOnlyFp16(n) ? Decision{true, "fp16 (allow_fp32_to_fp16: the cube has no fp32)"}
                             : Decision{false, "fp32 (allow_fp32_to_fp16)"};
    switch (precisionList(n)) {  // allow_mix_precision
      case PrecisionList::White: return {true, "fp16 (white list)"};
      case PrecisionList::Black: return {false, "fp32 (black list)"};
      case PrecisionList::Grey:
        for (Value* v : n.inputs())
          if (narrowed_.count(v)) return {true, "fp16 (grey, follows its producer)"};
        return {false, "fp32 (grey, follows its producer)"};
    }
    return {};
  }

  static bool wideInteger(DType t) {
    return t == DType::Int16 || t == DType::UInt16 || t == DType::Int32 || t == DType::UInt32 ||
           t == DType::Int64 || t == DType::UInt64;
  }

  // Every float input is a quantization scale or a constant, and at least one is a scale.
  bool computesOnlyScales(const Node& n) const {
    bool scale = false;
    for (const Value* v : n.inputs()) {
      if (!v || !v->type().isTensor() || !isFloating(v->type().dtype)) continue;
      if (scales_.count(v)) scale = true;
      else if (!v->constant()) return false;
    }
    return scale;
  }

  // What this node's float outputs carry: an unscaled integer range, or a quantization scale.
  void noteRanges(const Node& n) {
    const auto floatOutputs = [&](std::unordered_set<const Value*>& into) {
      for (const Value* o : n.outputs())
        if (o && o->type().isTensor() && isFloating(o->type().dtype)) into.insert(o);
    };
    if (n.opType() == "DynamicQuantizeLinear" && n.numOutputs() > 1 && n.output(1)) {
      scales_.insert(n.output(1));
      return;
    }
    if (n.opType() == "Cast" && n.numInputs() == 1 && n.input(0) && wideInteger(n.input(0)->type().dtype)) {
      floatOutputs(wide_);
      return;
    }
    bool readsWide = false;
    for (const Value* v : n.inputs()) readsWide = readsWide || wide_.count(v);
    if (readsWide && n.opType() != "Mul" && n.opType() != "Div") floatOutputs(wide_);  // Add, Relu... keep the range
    if (computesOnlyScales(n)) floatOutputs(scales_);
  }

  void visit(Node& n) {
    const Decision d = decide(n);
    noteRanges(n);
    if (d.fp16 && narrow(n)) {
      n.setAnnotation("precision", d.reason);
      r_.add("nodes_fp16");
      return;
    }
    if (readsOnlyShape(n)) return;
    if (d.unknownType) {  // said even without a cast: it explains why the mode left this node alone
      n.setAnnotation("precision", d.reason);
      r_.add("nodes_unknown_type");
    }
    bool casted = false;
    for (size_t i = 0; i < n.numInputs(); ++i)
      if (narrowed_.count(n.input(i))) {
        g_.setNodeInput(&n, i, toFp32(n.input(i), &n));
        casted = true;
      }
    if (casted) {
      n.setAnnotation("precision", d.reason.empty() ? "fp32" : d.reason);
      r_.add("nodes_fp32");
    }
  }

  // Narrows n's fp32 inputs and outputs; undoes it and returns false when the op's type constraints refuse fp16.
  bool narrow(Node& n) {
    const int64_t opset = m_.opsetFor(n.domain());
    if (invalid_.count(&n)) return false;  // already breaks its type rules: leave it be
    const std::vector<Value*> inputs = n.inputs();
    std::vector<Value*> outputs;
    for (size_t i = 0; i < n.numInputs(); ++i)
      if (isFp32(n.input(i)) && !fp32OnlyInput(n, i)) g_.setNodeInput(&n, i, toFp16(n.input(i), &n));
    for (Value* o : n.outputs())
      if (isFp32(o)) {
        ValueType t = o->type();
        t.dtype = DType::Float16;
        o->setType(std::move(t));
        outputs.push_back(o);
      }
    if (!OpRegistry::global().checkSignature(n, opset)) {
      narrowed_.insert(outputs.begin(), outputs.end());
      return true;
    }
    for (size_t i = 0; i < inputs.size(); ++i) g_.setNodeInput(&n, i, inputs[i]);
    for (Value* o : outputs) {
      ValueType t = o->type();
      t.dtype = DType::Float;
      o->setType(std::move(t));
    }
    return false;  // unused casts made for it are dropped at the end (sweepUnusedCasts)
  }

  // The fp16 form of v for a consumer: a converted constant, or a Cast placed before the first consumer.
  Value* toFp16(Value* v, Node* before) {
    if (auto it = fp16Of_.find(v); it != fp16Of_.end()) return it->second;
    Value* out = nullptr;
    if (const Tensor* c = v->constant()) {
      Tensor t = convertTensor(*c, DType::Float16);
      if (t.valid()) {
        out = constants_.add(g_, v, std::move(t), v->type().format, "_fp16");
        r_.add("weights_converted");
      }
    }
    if (!out) {
      out = insertCast(v, DType::Float16, before);
      fp32Of_[out] = v;  // an fp32 consumer of the cast reads the original instead
    }
    fp16Of_[v] = out;
    return out;
  }

  Value* toFp32(Value* v, Node* before) {
    if (auto it = fp32Of_.find(v); it != fp32Of_.end()) return it->second;
    Value* out = insertCast(v, DType::Float, before);
    fp32Of_[v] = out;
    return out;
  }

  Value* insertCast(Value* v, DType to, Node* before) {
    const std::string suffix = to == DType::Float16 ? "_fp16" : "_fp32";
    Node* cast = insertConversion(g_, "Cast", "", v, "Cast" + suffix, v->name() + suffix, before);
    cast->setAttr("to", Attribute(int64_t{dtypeToOnnx(to)}));
    ValueType t = v->type();
    t.dtype = to;
    cast->output(0)->setType(std::move(t));
    cast->setAnnotation("precision", to == DType::Float16 ? "fp16 (cast in)" : "fp32 (cast back)");
    casts_.push_back(cast);
    r_.add("casts_inserted");
    return cast->output(0);
  }

  // Nodes inside subgraphs keep fp32 (an fp16 value they capture is cast back in the outer graph); graph outputs keep
  // their declared dtype (the cast back takes the output's name, the fp16 value is renamed).
  void castBackAtBoundaries() {
    rewireSubgraphUses(g_, std::vector<Value*>(narrowed_.begin(), narrowed_.end()),
                       [&](Value* v, Node* before) { return toFp32(v, before); });
    replaceGraphOutputs(
        g_, [&](Value* v) { return narrowed_.count(v) > 0; }, [&](Value* v) { return toFp32(v, nullptr); },
        [](Value*) { return std::string("_fp16"); });
    sweepUnusedCasts();
  }

  void sweepUnusedCasts() {
    for (Node* c : casts_)
      if (!c->output(0)->hasUses() && !c->output(0)->isGraphOutput()) {
        g_.eraseNode(c);
        r_.add("casts_inserted", -1);
      }
    casts_.clear();
  }

  Model& m_;
  Graph& g_;
  const std::string& mode_;
  PassResult& r_;
  ConstantCopies constants_;
  std::unordered_set<Value*> narrowed_;  // fp32 values this pass turned into fp16
  std::unordered_set<const Value*> wide_;    // float forms of integer accumulators, not yet scaled
  std::unordered_set<const Value*> scales_;  // quantization scales
  std::unordered_map<Value*, Value*> fp16Of_, fp32Of_;
  std::vector<Node*> casts_;
  std::unordered_set<const Node*> invalid_;  // nodes whose type rules the imported model already broke
};

class RefineRunningPrecision final : public Pass {
 public:
  std::string name() const override { return "RefineRunningPrecision"; }

  PassResult run(PassContext& ctx) override {
    PassResult r;
    const std::string& mode = ctx.options.getString("precision_mode");
    if (mode == "force_fp32" || mode == "must_keep_origin_dtype") return r;
    PrecisionRewriter(ctx.model, mode, r).run();
    return r;
  }
};

}  // namespace

std::unique_ptr<Pass> makeRefineRunningPrecisionPass() { return std::make_unique<RefineRunningPrecision>(); }

}  // namespace kiln
