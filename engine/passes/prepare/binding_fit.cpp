#include "passes/prepare/binding_fit.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "ir/model.h"
#include "ir/opdefs/shape_inference.h"
#include "kernels/kernel.h"
#include "kernels/kernel_shape_probe.h"
#include "passes/constant_value.h"

namespace kiln {
namespace {

bool startsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// Whether a node computes data rather than shapes: a floating-point output of more than kMaxShapeFloats elements
// (known or not yet inferred). Exports do shape arithmetic on integers, and on floats only in scalars or short
// vectors (a scale, a division before Floor); evaluating the data path as well (every MatMul of a small encoder fed
// zeros) made each probe cost as much as running the model.
bool isData(const Node& n) {
  constexpr int64_t kMaxShapeFloats = 1024;
  for (size_t i = 0; i < n.numOutputs(); ++i) {
    const Value* out = n.output(i);
    if (!out || !out->type().isTensor() || !isFloating(out->type().dtype)) continue;
    const std::optional<int64_t> numel = out->type().shape.numel();
    if (!numel || *numel > kMaxShapeFloats) return true;
  }
  return false;
}

// The shape arithmetic inference cannot see into: index vectors computed from the bound extents (Range over the
// sequence length feeding a Gather from a position table, as GPT-2 and HF encoders build position ids, or a running
// count of the tokens). Small
// values computed from constants and static shapes are evaluated with the reference kernels, as ConstantFolding
// will; a Gather whose indices are known is checked against its table's extent without reading the table. Counts the
// nodes that fail: out-of-range indices, or a kernel that throws on the values. Stops once more than `limit` failed.
size_t shapeArithmeticFailures(const Graph& g, int64_t opset, size_t limit) {
  constexpr int64_t kMaxElements = 1 << 16;  // what ConstantFolding hands to kernels for shape work, roughly
  std::unordered_map<const Value*, Tensor> known;
  const auto valueOf = [&](const Value* v) -> const Tensor* {
    if (!v) return nullptr;
    if (auto it = known.find(v); it != known.end()) return &it->second;
    const Tensor* t = constantValueOf(v);
    return t && t->numel() <= kMaxElements ? t : nullptr;
  };
  KernelLimits limits;
  limits.maxOutputBytes = kMaxElements * 8;
  limits.opset = opset;
  // Integer inputs (token ids, masks) as zeros: position ids that exports count from them (CumSum of ones like
  // input_ids) are then known too. The zeros are valid ids, so they fail nothing the real data would not.
  for (const Value* in : g.inputs()) {
    if (in->constant() || !in->type().isTensor() || !(isInteger(in->type().dtype) || in->type().dtype == DType::Bool))
      continue;
    const std::optional<int64_t> numel = in->type().shape.numel();
    if (!numel || *numel > kMaxElements || !in->type().shape.staticExtents()) continue;
    const size_t bytes = static_cast<size_t>(*numel) * dtypeSize(in->type().dtype);
    known[in] = Tensor::fromBytes(in->type().dtype, *in->type().shape.staticExtents(), std::string(bytes, '\0'));
  }
  size_t failed = 0;
  for (const Node* n : g.nodes()) {
    if (failed > limit) break;
    if (!n->domain().empty() || n->numOutputs() == 0 || !n->output(0)) continue;
    const std::string& op = n->opType();
    if (op == "Shape" || op == "Size") {
      const Value* in = n->input(0);
      if (!in || !in->type().isTensor()) continue;
      const std::optional<std::vector<int64_t>> extents = in->type().shape.staticExtents();
      if (!extents) continue;
      const std::vector<int64_t>& dims = *extents;
      if (op == "Size") {
        int64_t total = 1;
        for (int64_t d : dims) total *= d;
        known[n->output(0)] = Tensor::fromVector<int64_t>(DType::Int64, {}, {total});
        continue;
      }
      const auto rank = static_cast<int64_t>(dims.size());
      const auto clampIndex = [rank](int64_t i) { return std::clamp(i < 0 ? i + rank : i, int64_t{0}, rank); };
      const int64_t start = clampIndex(n->attrInt("start", 0)), end = clampIndex(n->attrInt("end", rank));
      std::vector<int64_t> picked(dims.begin() + start, dims.begin() + std::max(start, end));
      known[n->output(0)] = Tensor::fromVector(DType::Int64, {static_cast<int64_t>(picked.size())}, picked);
      continue;
    }
    if (op == "Gather" && n->numInputs() >= 2) {
      // The table may be large: check the indices against its extent instead of gathering.
      const Tensor* indices = valueOf(n->input(1));
      const Value* data = n->input(0);
      if (indices && data && data->type().isTensor() && data->type().shape.rankKnown() && !valueOf(data)) {
        const Shape& s = data->type().shape;
        int64_t axis = n->attrInt("axis", 0);
        if (axis < 0) axis += static_cast<int64_t>(s.rank());
        if (axis >= 0 && axis < static_cast<int64_t>(s.rank()) && s[static_cast<size_t>(axis)].isStatic()) {
          const auto extent = static_cast<double>(s[static_cast<size_t>(axis)].value);
          for (double i : indices->toDouble())
            if (i < -extent || i >= extent) {
              ++failed;
              break;
            }
        }
        continue;
      }
    }
    if (!n->subgraphs().empty() || !hasKernel(*n) || isData(*n)) continue;
    std::vector<const Tensor*> inputs;
    bool ready = true;
    for (size_t i = 0; i < n->numInputs() && ready; ++i) {
      inputs.push_back(valueOf(n->input(i)));
      ready = !n->input(i) || inputs.back();
    }
    if (!ready) continue;
    try {
      std::vector<Tensor> out = evaluateNode(*n, inputs, limits);
      for (size_t i = 0; i < out.size() && i < n->numOutputs(); ++i)
        if (n->output(i) && out[i].numel() <= kMaxElements) known[n->output(i)] = std::move(out[i]);
    } catch (const KernelOutputTooLarge&) {
      // Not shape arithmetic: left alone.
    } catch (const std::exception&) {
      ++failed;
    }
  }
  return failed;
}

// One graph probed under several bindings: its nodes' order and the value types to put back after each probe, taken
// once (the probes change value types only; initializers' are never changed: they are neither inferred nor, being
// static, bound).
struct Probing {
  explicit Probing(Graph& graph) : g(graph), order(graph.topologicalOrder()) {
    g.forEachGraph([&](Graph& sg) {
      for (Value* v : sg.values())
        if (!v->constant() || !v->type().shape.isStatic()) saved.emplace_back(v, v->type());
    });
  }
  Graph& g;
  std::optional<std::vector<Node*>> order;
  std::vector<std::pair<Value*, ValueType>> saved;
};

// How many nodes inference (and the shape arithmetic after it) fails on with `binding` applied, counted up to one
// more than `limit`: a probe that only asks "more than the baseline?" stops at the first failure past it, usually
// early in the graph, where a too-short table is first read. The graph's types are put back afterwards.
size_t inferenceFailures(Probing& probing, const std::map<std::string, int64_t>& opsets, const ShapeBinding& binding,
                         size_t limit = SIZE_MAX) {
  Graph& g = probing.g;
  applyShapeBinding(g, binding);
  InferenceOptions options;
  options.maxWarnings = 0;
  const auto it = opsets.find("");
  const int64_t opset = it == opsets.end() ? 0 : it->second;
  options.probe = [opset](Node& n) { return probeOutputTypes(n, opset); };
  options.stopAfterFailures = limit;
  if (probing.order) options.order = &*probing.order;
  size_t failed = inferShapes(g, opsets, options).nodesFailed;
  if (failed <= limit) failed += shapeArithmeticFailures(g, opset, limit - failed);
  for (const auto& [v, t] : probing.saved)
    if (!(v->type() == t)) v->setType(t);
  return failed;
}

// The request with the sequence roles in play lowered to `v` (never raised).
BindingRequest lowered(BindingRequest request, bool sequence, bool past, int64_t v) {
  if (sequence) request.policy.sequence = std::min(request.policy.sequence, v);
  if (past) request.policy.pastSequence = std::min(request.policy.pastSequence, v);
  return request;
}

}  // namespace

ShapeBinding resolveFittedBinding(const Model& model, const BindingRequest& request) {
  // Probes restore every type they change (see the header): the model is only borrowed.
  Graph& g = const_cast<Graph&>(*model.graph);
  const std::map<std::string, int64_t>& opsets = model.opsets;
  ShapeBinding binding = resolveShapeBinding(g, request);
  // The roles the policy chose an extent for, from a symbol of their own (a total only follows them).
  bool sequence = false, past = false;
  for (const BoundSymbol& b : binding.bound) {
    sequence = sequence || startsWith(b.source, "dim_policy: sequence");
    past = past || startsWith(b.source, "dim_policy: past_sequence");
  }
  if (!sequence && !past) return binding;
  const int64_t top = std::max(sequence ? request.policy.sequence : 1, past ? request.policy.pastSequence : 1);
  Probing probing(g);
  const size_t atPolicy = inferenceFailures(probing, opsets, binding);
  if (atPolicy == 0 || top <= 1) return binding;
  const size_t atOne =
      inferenceFailures(probing, opsets, resolveShapeBinding(g, lowered(request, sequence, past, 1)));
  if (atPolicy <= atOne) return binding;  // the failures do not come from the sequence extents
  // Bisection: `lo` fails no more than at 1, `hi` does. Halving down from the policy's extent stops at a power of
  // two, and once an extent fits the boundary is often just below the failure above it: a table of 2^k rows read at
  // past + 1 (a decode step) fits exactly 2^k - 1. So that extent is probed first, once: it spares a full inference
  // for every halving it skips, and costs one probe that stops at its first failure otherwise.
  int64_t lo = 1, hi = top;
  bool belowFailureTried = false;
  while (hi - lo > 1) {
    int64_t mid = lo + (hi - lo) / 2;
    if (lo > 1 && !belowFailureTried) {
      mid = hi - 1;
      belowFailureTried = true;
    }
    const size_t failed =
        inferenceFailures(probing, opsets, resolveShapeBinding(g, lowered(request, sequence, past, mid)), atOne);
    (failed <= atOne ? lo : hi) = mid;
  }
  ShapeBinding fitted = resolveShapeBinding(g, lowered(request, sequence, past, lo));
  // Say why each lowered extent is not the policy's.
  for (BoundSymbol& b : fitted.bound) {
    const BoundSymbol* was = binding.find(b.symbol);
    if (!was || was->value == b.value || !startsWith(b.source, "dim_policy")) continue;
    b.source += ", fitted to the model: " + std::to_string(was->value) + " fails shape inference or indexing on " +
                std::to_string(atPolicy - atOne) + " node" + (atPolicy - atOne == 1 ? "" : "s");
  }
  return fitted;
}

std::string BindingFit::problem() const {
  if (fits()) return {};
  const size_t extra = failures - baseline;
  return "shape inference or indexing fails on " + std::to_string(extra) + " node" + (extra == 1 ? "" : "s") +
         " more than at extent 1 (a table of the model, such as its positions, is shorter)";
}

BindingFit checkBindingFit(const Model& model, const BindingRequest& request) {
  Graph& g = const_cast<Graph&>(*model.graph);  // restored by every probe, as above
  BindingFit fit;
  Probing probing(g);
  fit.failures = inferenceFailures(probing, model.opsets, resolveShapeBinding(g, request));
  if (fit.failures == 0) return fit;
  BindingRequest small = lowered(request, true, true, 1);
  for (auto& [symbol, v] : small.dimValues) v = 1;
  try {
    fit.baseline = inferenceFailures(probing, model.opsets, resolveShapeBinding(g, small));
  } catch (const std::invalid_argument&) {
    fit.baseline = fit.failures;  // no comparable binding at 1 (input_shape fixes it): nothing to blame the extents for
  }
  return fit;
}

}  // namespace kiln
