#include "kernels/kernel.h"

#include "ir/low_bit_types.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <set>

#include "kernels/kernel_util.h"
#include "ir/graph.h"
#include "ir/shape.h"

namespace kiln {

const Tensor& KernelContext::required(size_t i) const {
  const Tensor* t = input(i);
  if (!t) fail("input " + std::to_string(i) + " is missing");
  return *t;
}

void KernelContext::fail(const std::string& why) const {
  throw std::runtime_error(node_.opType() + " '" + node_.name() + "': " + why);
}

KernelRegistry& KernelRegistry::global() {
  // Explicit registration (not static initialisers): the engine is a static library, whose unreferenced objects
  // the linker would drop together with their registrations.
  static KernelRegistry registry = [] {
    KernelRegistry r;
    kernels::registerElementwiseMathKernels(r);
    kernels::registerElementwiseLogicKernels(r);
    kernels::registerShapeKernels(r);
    kernels::registerMovementKernels(r);
    kernels::registerCastKernels(r);
    kernels::registerReduceKernels(r);
    kernels::registerTransDataKernels(r);
    kernels::registerFusedKernels(r);
    kernels::registerMatMulKernels(r);
    kernels::registerConvKernels(r);
    kernels::registerPoolKernels(r);
    kernels::registerSoftmaxKernels(r);
    kernels::registerNormalizationKernels(r);
    kernels::registerFusedNnKernels(r);
    kernels::registerContribAttentionKernels(r);
    kernels::registerExperimentalKernels(r);
    kernels::registerRecurrentKernels(r);
    kernels::registerResizeKernels(r);
    kernels::registerPadKernels(r);
    kernels::registerFusedElementwiseKernels(r);
    kernels::registerActivationKernels(r);
    kernels::registerTrigonometryKernels(r);
    kernels::registerElementwiseBitsKernels(r);
    kernels::registerLinalgKernels(r);
    kernels::registerIndexingKernels(r);
    kernels::registerScatterGatherKernels(r);
    kernels::registerRearrangeKernels(r);
    kernels::registerUniqueKernels(r);
    kernels::registerEinsumKernels(r);
    kernels::registerQuantizeKernels(r);
    kernels::registerIntegerMatMulKernels(r);
    kernels::registerDetectionKernels(r);
    kernels::registerSpatialTransformKernels(r);
    kernels::registerOnnxAttentionKernels(r);
    kernels::registerDftKernels(r);
    kernels::registerCacheKernels(r);
    kernels::registerDeformConvKernels(r);
    kernels::registerStringKernels(r);
    kernels::registerLossKernels(r);
    return r;
  }();
  return registry;
}

void KernelRegistry::add(const std::string& opType, KernelFn fn, const std::string& domain) {
  kernels_[domain][opType].fn = fn;
}

void KernelRegistry::addStringAware(const std::string& opType, KernelFn fn, const std::string& domain) {
  Entry& e = kernels_[domain][opType];
  e.fn = fn;
  e.readsStrings = true;
}

const KernelRegistry::Entry* KernelRegistry::entry(const std::string& domain, const std::string& opType) const {
  // "ai.onnx" is the default domain spelled out.
  auto d = kernels_.find(domain == "ai.onnx" ? std::string_view() : std::string_view(domain));
  if (d == kernels_.end()) return nullptr;
  auto it = d->second.find(std::string_view(opType));
  return it == d->second.end() ? nullptr : &it->second;
}

bool KernelRegistry::readsStrings(const std::string& domain, const std::string& opType) const {
  const Entry* e = entry(domain, opType);
  return e && e->readsStrings;
}

KernelFn KernelRegistry::find(const std::string& domain, const std::string& opType) const {
  const Entry* e = entry(domain, opType);
  return e ? e->fn : nullptr;
}

std::vector<std::string> KernelRegistry::opTypes() const {
  std::vector<std::string> out;
  for (const auto& [domain, ops] : kernels_)
    for (const auto& [op, e] : ops) out.push_back(domain.empty() ? op : domain + ":" + op);
  std::sort(out.begin(), out.end());
  return out;
}

bool hasKernel(const Node& node) { return KernelRegistry::global().find(node.domain(), node.opType()) != nullptr; }

std::vector<Tensor> evaluateNode(const Node& node, const std::vector<const Tensor*>& inputs) {
  return evaluateNode(node, inputs, KernelLimits{});
}

namespace {

bool isLowBit(DType t) { return isPacked(t) || isLowBitFloat(t); }

// Kernels that read the low-bit types (float8, float4, int4) themselves, or only look at shapes and share storage.
bool readsLowBitItself(const Node& n) {
  static const std::set<std::string, std::less<>> ops = {
      "Cast", "CastLike", "QuantizeLinear", "DequantizeLinear", "BitCast", "Reshape", "Identity", "Flatten",
      "Squeeze", "Unsqueeze", "Shape", "Size", "Constant", "kiln:WeightQuantMatMul"};
  return ops.count(n.qualifiedType()) > 0;
}

// Every other kernel (Transpose, Gather, Concat, Pad... over int4 or float8 data) runs on the widened values (int4 ->
// int8, float8 / float4 -> fp32, exactly) and its outputs the node declares low-bit are narrowed back, exactly too:
// data movement never leaves the type's values.
std::vector<Tensor> evaluateWidened(const Node& node, const std::vector<const Tensor*>& inputs,
                                    const KernelLimits& limits, KernelFn fn) {
  std::vector<Tensor> wide(inputs.size());
  std::vector<const Tensor*> ptrs(inputs.size(), nullptr);
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i]) {
      wide[i] = isLowBit(inputs[i]->dtype()) ? widenLowBit(*inputs[i]) : *inputs[i];
      ptrs[i] = &wide[i];
    }
  KernelContext ctx(node, ptrs, limits);
  std::vector<Tensor> out = fn(ctx);
  if (!out.empty() && out.size() != node.numOutputs())
    ctx.fail("kernel produced " + std::to_string(out.size()) + " outputs for " + std::to_string(node.numOutputs()));
  for (size_t i = 0; i < out.size(); ++i)
    if (const Value* v = node.output(i); v && v->type().isTensor() && isLowBit(v->type().dtype) && out[i].valid() &&
                                         out[i].dtype() != v->type().dtype)
      out[i] = narrowToLowBit(out[i], v->type().dtype, true);
  return out;
}

}  // namespace

std::vector<Tensor> evaluateNode(const Node& node, const std::vector<const Tensor*>& inputs,
                                 const KernelLimits& limits) {
  KernelFn fn = KernelRegistry::global().find(node.domain(), node.opType());
  if (!fn) return {};
  // String and complex tensors are outside the library (strings only reach kernels that read them): decline rather
  // than let a kernel misread them.
  const bool strings = std::any_of(inputs.begin(), inputs.end(), [](const Tensor* t) {
                         return t && t->dtype() == DType::String;
                       }) && KernelRegistry::global().readsStrings(node.domain(), node.opType());
  for (const Tensor* t : inputs)
    if (t && (!t->valid() || (dtypeSize(t->dtype()) == 0 && !(strings && t->dtype() == DType::String)) ||
              t->dtype() == DType::Complex64 || t->dtype() == DType::Complex128))
      return {};
  if (std::any_of(inputs.begin(), inputs.end(), [](const Tensor* t) { return t && isLowBit(t->dtype()); }) &&
      !readsLowBitItself(node))
    return evaluateWidened(node, inputs, limits, fn);
  KernelContext ctx(node, inputs, limits);
  std::vector<Tensor> out = fn(ctx);
  if (!out.empty() && out.size() != node.numOutputs())
    ctx.fail("kernel produced " + std::to_string(out.size()) + " outputs for " + std::to_string(node.numOutputs()));
  return out;
}

namespace kernels {

OutBuffer::OutBuffer(const KernelContext& ctx, DType dtype, std::vector<int64_t> dims, HeapStorage::Start start)
    : dtype_(dtype), dims_(std::move(dims)) {
  for (int64_t d : dims_)
    if (d < 0) ctx.fail("negative output extent " + std::to_string(d));
  std::optional<int64_t> n = checkedProduct(dims_);
  std::optional<int64_t> bytes = n ? checkedMul(*n, dtypeSize(dtype)) : std::nullopt;
  if (!bytes)
    throw KernelOutputTooLarge(ctx.node().opType() + " '" + ctx.node().name() + "': output size overflows",
                               std::numeric_limits<int64_t>::max());
  if (*bytes > ctx.limits().maxOutputBytes)
    throw KernelOutputTooLarge(ctx.node().opType() + " '" + ctx.node().name() + "': output of " +
                                   std::to_string(*bytes) + " bytes exceeds the limit of " +
                                   std::to_string(ctx.limits().maxOutputBytes) + " (emulator.max_tensor_bytes)",
                               *bytes);
  numel_ = *n;
  storage_ = std::make_shared<HeapStorage>(static_cast<size_t>(*bytes), start);
}

void checkScratch(const KernelContext& ctx, int64_t elements, int64_t elementBytes) {
  const std::optional<int64_t> bytes = checkedMul(elements, elementBytes);
  if (!bytes || *bytes > ctx.limits().maxOutputBytes)
    throw KernelOutputTooLarge(ctx.node().opType() + " '" + ctx.node().name() + "': scratch of " +
                                   (bytes ? std::to_string(*bytes) : std::string("overflowing")) +
                                   " bytes exceeds the limit of " + std::to_string(ctx.limits().maxOutputBytes) +
                                   " (emulator.max_tensor_bytes)",
                               bytes.value_or(std::numeric_limits<int64_t>::max()));
}

namespace {
// Keeps the source tensor (and so its storage) alive under a view with other dims.
class TensorStorage final : public Storage {
 public:
  explicit TensorStorage(Tensor t) : t_(std::move(t)) {}
  const uint8_t* data() const override { return t_.data(); }
  size_t size() const override { return t_.byteSize(); }

 private:
  Tensor t_;
};
}  // namespace

Tensor viewAs(const Tensor& t, std::vector<int64_t> dims) {
  return Tensor(t.dtype(), std::move(dims), std::make_shared<TensorStorage>(t), 0);
}

std::vector<int64_t> stridesOf(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

std::vector<int64_t> broadcastShapes(const KernelContext& ctx, const std::vector<const std::vector<int64_t>*>& shapes) {
  size_t rank = 0;
  for (const auto* s : shapes) rank = std::max(rank, s->size());
  std::vector<int64_t> out(rank, 1);
  // Extents agree when equal or when one is 1; so a 0 meeting a 1 gives 0, as in numpy.
  for (const auto* s : shapes) {
    const size_t lead = rank - s->size();
    for (size_t i = 0; i < s->size(); ++i) {
      const int64_t d = (*s)[i];
      int64_t& o = out[lead + i];
      if (d == o || d == 1) continue;
      if (o == 1) {
        o = d;
        continue;
      }
      ctx.fail("shapes do not broadcast (extent " + std::to_string(d) + " against " + std::to_string(o) + ")");
    }
  }
  return out;
}

StrideWalker::StrideWalker(std::vector<int64_t> dims, std::vector<std::vector<int64_t>> strides,
                           std::vector<int64_t> bases)
    : dims_(std::move(dims)), index_(dims_.size(), 0), strides_(std::move(strides)) {
  offsets_ = bases.empty() ? std::vector<int64_t>(strides_.size(), 0) : std::move(bases);
  const std::vector<int64_t> contiguous = stridesOf(dims_);
  for (size_t k = 0; k < strides_.size(); ++k) {
    for (size_t d = 0; d < dims_.size(); ++d)
      if (dims_[d] != 1 && strides_[k][d] != contiguous[d]) flat_ = false;
  }
}

void StrideWalker::next() {
  if (flat_) {
    for (int64_t& o : offsets_) ++o;
    return;
  }
  for (size_t d = dims_.size(); d-- > 0;) {
    if (++index_[d] < dims_[d]) {
      for (size_t k = 0; k < offsets_.size(); ++k) offsets_[k] += strides_[k][d];
      return;
    }
    for (size_t k = 0; k < offsets_.size(); ++k) offsets_[k] -= strides_[k][d] * (dims_[d] - 1);
    index_[d] = 0;
  }
}

std::vector<int64_t> broadcastStrides(const std::vector<int64_t>& out, const std::vector<int64_t>& in) {
  std::vector<int64_t> s(out.size(), 0);
  const std::vector<int64_t> own = stridesOf(in);
  const size_t lead = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) s[lead + i] = in[i] == 1 ? 0 : own[i];
  return s;
}

namespace {
std::vector<std::vector<int64_t>> allBroadcastStrides(const std::vector<int64_t>& out,
                                                      const std::vector<const std::vector<int64_t>*>& ins) {
  std::vector<std::vector<int64_t>> s;
  for (const auto* d : ins) s.push_back(broadcastStrides(out, *d));
  return s;
}
}  // namespace

BroadcastWalker::BroadcastWalker(const std::vector<int64_t>& outDims,
                                 const std::vector<const std::vector<int64_t>*>& inDims)
    : StrideWalker(outDims, allBroadcastStrides(outDims, inDims)) {}

namespace {
// One row of a strided copy: n elements of T, `stride` elements apart in the source (memcpy per element: a weight
// in a mapped file may sit at any address).
template <typename T>
void copyRow(uint8_t* dst, const uint8_t* src, int64_t n, int64_t stride) {
  if (stride == 1) {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(T));
    return;
  }
  for (int64_t j = 0; j < n; ++j) std::memcpy(dst + j * sizeof(T), src + j * stride * int64_t(sizeof(T)), sizeof(T));
}
}  // namespace

void stridedCopy(OutBuffer& out, const Tensor& in, const std::vector<int64_t>& dims,
                 const std::vector<int64_t>& strides, int64_t base) {
  const int64_t size = dtypeSize(in.dtype());
  const uint8_t* src = in.data();
  uint8_t* dst = out.data();
  const int64_t inner = dims.empty() ? 1 : dims.back();
  if (out.numel() == 0 || inner == 0) return;
  if (dims.empty() || !(size == 1 || size == 2 || size == 4 || size == 8)) {
    StrideWalker w(dims, {strides}, {base});
    for (int64_t i = 0; i < out.numel(); ++i, w.next())
      copyElement(dst + i * size, src + w.offset(0) * size, static_cast<size_t>(size));
    return;
  }
  // Row by row along the last axis (the walker steps once per row): a Transpose's or Slice's rows are plain loops,
  // or one memcpy where the row is contiguous in the source.
  const int64_t stride = strides.back(), rows = out.numel() / inner;
  StrideWalker w(std::vector<int64_t>(dims.begin(), dims.end() - 1), {std::vector<int64_t>(strides.begin(), strides.end() - 1)},
                 {base});
  for (int64_t r = 0; r < rows; ++r) {
    uint8_t* d = dst + r * inner * size;
    const uint8_t* s = src + w.offset(0) * size;
    switch (size) {
      case 1: copyRow<uint8_t>(d, s, inner, stride); break;
      case 2: copyRow<uint16_t>(d, s, inner, stride); break;
      case 4: copyRow<uint32_t>(d, s, inner, stride); break;
      default: copyRow<uint64_t>(d, s, inner, stride); break;
    }
    if (r + 1 < rows) w.next();
  }
}

int64_t normalizeAxis(const KernelContext& ctx, int64_t axis, int64_t rank, const char* what) {
  if (axis < -rank || axis >= rank)
    ctx.fail(std::string(what) + " " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> intValues(const KernelContext& ctx, const Tensor& t, const char* what) {
  if (!isInteger(t.dtype())) ctx.fail(std::string(what) + " must be an integer tensor");
  return t.toInt64();
}

bool hasAttr(const Node& node, const char* name) { return node.attr(name) != nullptr; }

}  // namespace kernels
}  // namespace kiln
