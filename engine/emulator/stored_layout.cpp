#include "emulator/stored_layout.h"

#include <algorithm>

#include <set>
#include <stdexcept>
#include <string>

#include "emulator/reference_executor.h"
#include "kernels/conv_blocked.h"
#include "kernels/pool_blocked.h"
#include "kernels/conv_followers.h"
#include "kernels/kernel_util.h"
#include "kernels/nn_kernels.h"
#include "kernels/transdata.h"
#include "ir/graph.h"
#include "ir/shape.h"

namespace kiln {

namespace {

std::string describe(const ValueType& t) { return t.toString(); }

// The NCHW / ND extents TransData works in for a blocked t: the origin placed in NCHW for the 4-D layouts (a norm's
// [C] parameters sit at [1, C, 1, 1]), -1 where the origin is symbolic (the physical dims keep those).
std::vector<int64_t> transDataOrigin(const ValueType& t) {
  std::vector<int64_t> origin;
  for (const Dim& d : t.originShape.dims()) origin.push_back(d.isStatic() ? d.value : -1);
  if (t.format == Format::NC1HWC0 || t.format == Format::FRACTAL_Z) return nchwPlacement(origin);
  return origin;
}

// GE keeps a TensorFlow tensor's logical layout as its origin format: NHWC activations, HWCN filters. The blocked
// layouts are built from the NCHW order of the same data, so such a tensor is untiled to NCHW and then permuted.
// toNchw: origin axes in NCHW order; fromNchw: the permutation back. Empty when the origin is NCHW-ordered already.
struct OriginPermutation {
  std::vector<size_t> toNchw, fromNchw;
};
OriginPermutation originPermutation(const ValueType& t) {
  if (t.originShape.rank() != 4 || (t.format != Format::NC1HWC0 && t.format != Format::FRACTAL_Z)) return {};
  if (t.originFormat == Format::NHWC) return {{0, 3, 1, 2}, {0, 2, 3, 1}};
  if (t.originFormat == Format::HWCN) return {{3, 2, 0, 1}, {2, 3, 1, 0}};
  return {};
}

}  // namespace

bool readsPhysicalLayout(const Node& n) {  // the layout kernels convert physical data themselves
  return n.domain() == "kiln" && (n.opType() == "TransData" || n.opType() == "TransDataCast");
}

Tensor logicalTensor(const Tensor& stored, const ValueType& t, int64_t maxOutputBytes) {
  if (!isBlockedFormat(t.format) || !stored.valid()) return stored;
  if (!t.originShape.rankKnown())
    throw std::runtime_error("a " + describe(t) + " tensor has no recorded origin shape: its logical form is unknown");
  const OriginPermutation perm = originPermutation(t);
  std::vector<int64_t> origin = transDataOrigin(t);
  if (!perm.toNchw.empty()) {
    std::vector<int64_t> nchw;
    for (size_t a : perm.toNchw) nchw.push_back(origin[a]);
    origin = std::move(nchw);
  }
  Tensor logical = transDataTensor(stored, t.format, Format::ND, origin, maxOutputBytes);
  if (logical.valid() && !perm.fromNchw.empty()) logical = permuteTensor(logical, perm.fromNchw, maxOutputBytes);
  if (!logical.valid())
    throw std::runtime_error("a " + describe(t) + " tensor of extents " + Shape::ofStatic(stored.dims()).toString() +
                             " does not hold its origin " + t.originShape.toString());
  if (logical.dims().size() == t.originShape.rank()) return logical;
  // Placed in NCHW from a lower rank: back to the origin's own extents (the element count is the same).
  auto dims = t.originShape.staticExtents();
  if (!dims) throw std::runtime_error("a " + describe(t) + " tensor of rank < 4 has a symbolic origin");
  return kernels::viewAs(logical, *dims);
}

Tensor storedTensor(const Tensor& logical, const ValueType& t, int64_t maxOutputBytes) {
  if (!isBlockedFormat(t.format) || !logical.valid()) return logical;
  Tensor in = logical;
  if (const OriginPermutation perm = originPermutation(t); !perm.toNchw.empty() && in.dims().size() == 4)
    in = permuteTensor(in, perm.toNchw, maxOutputBytes);
  if ((t.format == Format::NC1HWC0 || t.format == Format::FRACTAL_Z) && in.dims().size() < 4)
    in = kernels::viewAs(in, nchwPlacement(in.dims()));
  Tensor stored = transDataTensor(in, Format::ND, t.format, {}, maxOutputBytes);
  const auto expected = t.shape.rankKnown() ? t.shape.dims().size() : 0;
  bool fits = stored.valid() && stored.dims().size() == expected;
  for (size_t a = 0; fits && a < expected; ++a)
    fits = !t.shape[a].isStatic() || t.shape[a].value == stored.dims()[a];
  if (!fits)
    throw std::runtime_error("a result of extents " + Shape::ofStatic(logical.dims()).toString() +
                             " cannot be stored as " + describe(t));
  return stored;
}

namespace {

// Element-wise ops that map zero to zero: on operands that all share one blocked layout and extents, they compute
// the same logical values straight on the stored blocks (as the NPU's vector unit does), and the padding lanes stay
// zero. Converting to NCHW and back around each of them was half of a compiled DenseNet run.
bool zeroPreservingElementwise(const Node& n) {
  static const std::set<std::string> ops = {"Add", "Sub",      "Mul",  "Relu",    "LeakyRelu", "Neg",   "Abs",
                                            "Max", "Min",      "Tanh", "Sqrt",    "Elu",       "Selu",  "HardSwish",
                                            "Sign", "Softsign", "Erf", "Sin",     "Identity",  "Round", "Floor",
                                            "Ceil", "Atan",     "Asin", "Sinh",   "Tan",       "Asinh", "Atanh"};
  return (n.domain().empty() || n.domain() == "ai.onnx") && ops.count(n.opType()) > 0;
}

// An NC1HWC0 operand whose blocks broadcast against the output's as its NCHW origin does against the output's: the
// same channels (so lane c of block c1 is channel c1·C0 + c on both sides), other axes equal or 1. A per-channel
// scale stored as [1, C1, 1, 1, C0] then multiplies every position of [N, C1, H, W, C0] in place.
bool broadcastsBlockwise(const ValueType& in, const ValueType& out) {
  if (in.format != Format::NC1HWC0 || in.dtype != out.dtype || !originPermutation(in).toNchw.empty()) return false;
  const std::vector<int64_t> a = transDataOrigin(in), b = transDataOrigin(out);
  const auto pa = in.shape.staticExtents(), pb = out.shape.staticExtents();
  if (a.size() != 4 || b.size() != 4 || a[1] < 0 || a[1] != b[1] || !pa || !pb || pa->size() != pb->size())
    return false;
  for (size_t i = 0; i < pa->size(); ++i)
    if ((*pa)[i] != (*pb)[i] && (*pa)[i] != 1) return false;
  return true;
}

// Concat along the channels of NC1HWC0 operands whose channel counts are whole blocks: the blocks of each input
// follow one another along C1, so joining the stored tensors along their axis 1 is the stored result (DenseNet and
// Inception join feature maps at every layer).
bool concatOfWholeBlocks(const Node& n) {
  if (n.opType() != "Concat" || !(n.domain().empty() || n.domain() == "ai.onnx") || n.attrInt("axis", 0) != 1 ||
      n.numOutputs() != 1 || !n.output(0) || n.numInputs() == 0)
    return false;
  const ValueType& out = n.output(0)->type();
  if (out.format != Format::NC1HWC0 || !originPermutation(out).toNchw.empty()) return false;
  const int64_t c0 = blockC0(dtypeSize(out.dtype));
  for (const Value* v : n.inputs()) {
    if (!v || v->type().format != Format::NC1HWC0 || v->type().dtype != out.dtype ||
        !originPermutation(v->type()).toNchw.empty())
      return false;
    const std::vector<int64_t> origin = transDataOrigin(v->type());
    if (origin.size() != 4 || origin[1] <= 0 || origin[1] % c0 != 0 || v->type().shape.rank() != 5) return false;
  }
  return true;
}

// The operand `stored` of value v as its kernel reads it: itself unless blocked, else the logical form `prepared`
// holds for v, else one converted into `converted` (reserved by the caller: the pointer returned points into it).
const Tensor* logicalOperand(const Value* v, const Tensor* stored, const LogicalByValue* prepared,
                             int64_t maxOutputBytes, std::vector<Tensor>& converted) {
  if (!stored || !v || !isBlockedFormat(v->type().format)) return stored;
  if (prepared)
    if (auto it = prepared->find(v); it != prepared->end()) return &it->second;
  converted.push_back(logicalTensor(*stored, v->type(), maxOutputBytes));
  return &converted.back();
}

bool computesOnStoredBlocks(const Node& n) {
  if (concatOfWholeBlocks(n)) return true;
  if (!zeroPreservingElementwise(n) || n.numOutputs() != 1 || !n.output(0)) return false;
  const ValueType& out = n.output(0)->type();
  if (!isBlockedFormat(out.format) || !originPermutation(out).toNchw.empty()) return false;
  for (const Value* v : n.inputs())  // every operand: the output's own type, or a blockwise broadcast of it
    if (!v || !(v->type() == out || (out.format == Format::NC1HWC0 && broadcastsBlockwise(v->type(), out))))
      return false;
  return n.numInputs() > 0;
}

}  // namespace

KernelOperands::KernelOperands(const Node& n, const std::vector<const Tensor*>& stored, int64_t maxOutputBytes,
                               const LogicalByValue* prepared)
    : node_(n),
      maxOutputBytes_(maxOutputBytes),
      convert_(!readsPhysicalLayout(n) && !computesOnStoredBlocks(n)),
      inputs_(stored) {
  if (!convert_) return;
  converted_.reserve(stored.size());  // no reallocation: inputs_ points into it
  for (size_t i = 0; i < stored.size() && i < n.numInputs(); ++i)
    inputs_[i] = logicalOperand(n.input(i), stored[i], prepared, maxOutputBytes_, converted_);
}

void KernelOperands::storeOutputs(std::vector<Tensor>& results) const {
  if (!convert_) return;
  for (size_t i = 0; i < results.size() && i < node_.numOutputs(); ++i)
    if (const Value* v = node_.output(i); v && isBlockedFormat(v->type().format))
      results[i] = storedTensor(results[i], v->type(), maxOutputBytes_);
}

namespace {

bool nc1hwc0Float(const Value* v) {
  if (!v) return false;
  const ValueType& t = v->type();
  if (t.format != Format::NC1HWC0 || t.dtype != DType::Float || blockC0(4) != 16 || !originPermutation(t).toNchw.empty())
    return false;
  const std::vector<int64_t> origin = transDataOrigin(t);
  return origin.size() == 4 && std::all_of(origin.begin(), origin.end(), [](int64_t d) { return d >= 0; });
}

}  // namespace

std::optional<Tensor> convolveOnStoredBlocks(const Node& n, const std::vector<const Tensor*>& stored,
                                             const KernelLimits& limits, const LogicalByValue* prepared,
                                             std::span<float> into, std::span<float> workspace) {
  const bool fused = n.domain() == "kiln" && n.opType() == "FusedConv";
  if (!fused && !(n.domain().empty() && n.opType() == "Conv")) return std::nullopt;
  if (n.numOutputs() != 1 || n.numInputs() < 2 || stored.size() < 2 || !stored[0] || !stored[1] ||
      !nc1hwc0Float(n.input(0)) || !nc1hwc0Float(n.output(0)))
    return std::nullopt;
  const Value* z = fused && n.numInputs() > 3 ? n.input(3) : nullptr;
  if (z && (!nc1hwc0Float(z) || z->type() != n.output(0)->type())) return std::nullopt;
  std::vector<const Tensor*> inputs(stored.begin(), stored.end());
  std::vector<Tensor> converted;
  converted.reserve(2);  // no reallocation: inputs points into it
  for (size_t i = 1; i <= 2 && i < inputs.size() && i < n.numInputs(); ++i)  // W and B in logical form
    inputs[i] = logicalOperand(n.input(i), inputs[i], prepared, limits.maxOutputBytes, converted);
  return kernels::convolveStoredNc1hwc0(n, inputs, transDataOrigin(n.input(0)->type()), limits, into, workspace);
}

int64_t blockedConvWorkspace(const Node& n) {
  const bool conv = (n.domain() == "kiln" && n.opType() == "FusedConv") || (n.domain().empty() && n.opType() == "Conv");
  if (!conv || n.numOutputs() != 1 || n.numInputs() < 2 || !nc1hwc0Float(n.input(0)) || !nc1hwc0Float(n.output(0)) ||
      !n.input(1) || n.attrInt("group", 1) != 1)
    return 0;
  const ValueType& w = n.input(1)->type();
  const std::optional<std::vector<int64_t>> wDims =
      isBlockedFormat(w.format) ? std::optional<std::vector<int64_t>>(transDataOrigin(w)) : w.shape.staticExtents();
  const std::vector<int64_t> out = transDataOrigin(n.output(0)->type());
  if (!wDims || wDims->size() != 4 || out.size() != 4) return 0;
  const std::optional<int64_t> taps = checkedMul((*wDims)[2], (*wDims)[3]);
  return taps ? kernels::nn::blockedConvWorkspace((*wDims)[1], *taps, out[1], out[2], out[3]) : 0;
}

std::optional<Tensor> channelOpOnStoredBlocks(const Node& n, const std::vector<const Tensor*>& stored,
                                              const KernelLimits& limits, const LogicalByValue* prepared,
                                              std::span<float> into) {
  const bool batchNorm = n.opType() == "BatchNormalization", binary = n.opType() == "Mul" || n.opType() == "Add";
  if (!n.domain().empty() || !(batchNorm || binary) || n.numOutputs() != 1 || !nc1hwc0Float(n.output(0)) ||
      stored.size() != n.numInputs())
    return std::nullopt;
  const ValueType& out = n.output(0)->type();
  const std::vector<int64_t> logical = transDataOrigin(out);
  // The activation: the input stored as the output is (for Mul and Add, either side).
  size_t slot = 0;
  while (slot < (binary ? 2u : 1u) && !(n.input(slot) && n.input(slot)->type() == out && stored[slot])) ++slot;
  if (slot == (binary ? 2u : 1u) || !kernels::canFollowConv(n, slot)) return std::nullopt;
  // The other operands are per-channel vectors at most (checked before converting any of them).
  for (size_t i = 0; i < n.numInputs(); ++i) {
    const Value* v = n.input(i);
    if (i == slot || !v) continue;
    const ValueType& t = v->type();
    const std::optional<std::vector<int64_t>> extents =
        isBlockedFormat(t.format) ? std::optional<std::vector<int64_t>>(transDataOrigin(t)) : t.shape.staticExtents();
    const std::optional<int64_t> count = extents ? checkedProduct(*extents) : std::nullopt;
    if (!count || *count < 1 || *count > logical[1]) return std::nullopt;
  }
  kernels::ConvFollower follower{&n, {}, slot};
  std::vector<Tensor> converted;
  converted.reserve(n.numInputs());  // no reallocation: follower.inputs points into it
  for (size_t i = 0; i < n.numInputs(); ++i)
    follower.inputs.push_back(i == slot ? nullptr
                                        : logicalOperand(n.input(i), stored[i], prepared, limits.maxOutputBytes, converted));
  return kernels::followersOnNc1hwc0({follower}, *stored[slot], logical, limits, into);
}

std::optional<Tensor> channelChainOnStoredBlocks(const Node& n, const std::vector<const Tensor*>& stored,
                                                 const KernelLimits& limits, const LogicalByValue* prepared,
                                                 std::span<float> into) {
  const Graph* body = definingBody(n);
  if (!body || n.numOutputs() != 1 || !nc1hwc0Float(n.output(0)) || body->outputs().size() != 1 ||
      stored.size() != n.numInputs() || body->inputs().size() != n.numInputs() || body->numNodes() < 2)
    return std::nullopt;
  const auto order = body->topologicalOrder();
  if (!order) return std::nullopt;
  const ValueType& out = n.output(0)->type();
  const std::vector<int64_t> logical = transDataOrigin(out);
  // The outer tensor behind a body value: a body input is the node's input at the same place.
  const auto outerIndex = [&](const Value* v) -> std::optional<size_t> {
    for (size_t i = 0; i < body->inputs().size(); ++i)
      if (body->inputs()[i] == v) return i;
    return std::nullopt;
  };
  // The body must be one chain: the first node reads the activation (a body input stored as the output is), each
  // next node reads the one before, only the last one's value leaves the body, every other operand is per-channel.
  std::vector<kernels::ConvFollower> followers;
  std::vector<Tensor> converted;
  converted.reserve(2 * order->size());  // no reallocation: follower inputs point into it
  const Tensor* activation = nullptr;
  const Value* previous = nullptr;
  for (const Node* m : *order) {
    if (m->numOutputs() != 1 || !m->output(0)) return std::nullopt;
    kernels::ConvFollower f{m, {}, m->numInputs()};
    for (size_t k = 0; k < m->numInputs(); ++k) {
      const Value* v = m->input(k);
      const bool chain = previous ? v == previous
                                  : v && v->type() == out && outerIndex(v) && stored[*outerIndex(v)];
      if (chain && f.chainInput == m->numInputs()) {
        f.chainInput = k;
        if (!previous) activation = stored[*outerIndex(v)];
        continue;
      }
      if (!v) return std::nullopt;
      const ValueType& t = v->type();
      const std::optional<std::vector<int64_t>> extents =
          isBlockedFormat(t.format) ? std::optional<std::vector<int64_t>>(transDataOrigin(t)) : t.shape.staticExtents();
      const std::optional<int64_t> count = extents ? checkedProduct(*extents) : std::nullopt;
      if (!count || *count < 1 || *count > logical[1]) return std::nullopt;
    }
    if (f.chainInput == m->numInputs() || !kernels::canFollowConv(*m, f.chainInput)) return std::nullopt;
    if (m != order->back() && (m->output(0)->uses().size() != 1 || m->output(0)->isGraphOutput())) return std::nullopt;
    followers.push_back(std::move(f));
    previous = m->output(0);
  }
  if (!activation || previous != body->outputs()[0]) return std::nullopt;
  for (kernels::ConvFollower& f : followers) {  // the operands, in the logical form the steps read
    for (size_t k = 0; k < f.node->numInputs(); ++k) {
      if (k == f.chainInput) {
        f.inputs.push_back(nullptr);
        continue;
      }
      const Value* v = f.node->input(k);
      const std::optional<size_t> outer = outerIndex(v);
      const Tensor* t = outer ? stored[*outer] : v->constant();
      if (!t) return std::nullopt;
      f.inputs.push_back(logicalOperand(outer ? n.input(*outer) : v, t, outer ? prepared : nullptr,
                                        limits.maxOutputBytes, converted));
    }
  }
  return kernels::followersOnNc1hwc0(followers, *activation, logical, limits, into);
}

std::optional<Tensor> poolOnStoredBlocks(const Node& n, const std::vector<const Tensor*>& stored,
                                         const KernelLimits& limits) {
  if (n.numOutputs() != 1 || n.numInputs() != 1 || stored.size() != 1 || !stored[0] || !nc1hwc0Float(n.input(0)) ||
      !nc1hwc0Float(n.output(0)))
    return std::nullopt;
  return kernels::globalPoolNc1hwc0(n, *stored[0], transDataOrigin(n.input(0)->type()), limits);
}

}  // namespace kiln
