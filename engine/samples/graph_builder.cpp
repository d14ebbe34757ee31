#include "samples/graph_builder.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace kiln::samples {
namespace {

// splitmix64: tiny, fast and good enough for weights; seeded per tensor so values do not depend on build order.
uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001B3ull;
  return h;
}

std::string formatFloat(float v) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);  // shortest round-trip form: stable across runs
  return std::string(buf, r.ptr);
}

}  // namespace

Init Init::fanIn(int64_t inputs, float gain) {
  const float bound = std::sqrt(3.0f / static_cast<float>(std::max<int64_t>(inputs, 1))) * gain;
  return {-bound, bound};
}

Init Init::bias(int64_t inputs) {
  const float bound = 1.0f / std::sqrt(static_cast<float>(std::max<int64_t>(inputs, 1)));
  return {-bound, bound};
}

NamedAttribute intAttr(std::string name, int64_t v) { return {std::move(name), Attribute(v)}; }
NamedAttribute floatAttr(std::string name, float v) { return {std::move(name), Attribute(v)}; }
NamedAttribute intsAttr(std::string name, std::vector<int64_t> v) { return {std::move(name), Attribute(std::move(v))}; }

GraphBuilder::GraphBuilder(Model* model, const SampleOptions& options) : model_(model), options_(options) {
  if (model_) {
    g_ = model_->graph.get();
  } else {
    scratch_ = std::make_unique<Graph>(nullptr);
    placeholder_ = scratch_->addValue("placeholder");
  }
}

GraphBuilder::~GraphBuilder() = default;

GraphBuilder::Scope::~Scope() {
  b_.nodeScopes_.pop_back();
  b_.weightScopes_.pop_back();
}

GraphBuilder::Scope GraphBuilder::scope(const std::string& nodeSegment, const std::string& weightSegment) {
  nodeScopes_.push_back(nodeSegment);
  weightScopes_.push_back(weightSegment);
  return Scope(*this);
}

GraphBuilder::Scope GraphBuilder::item(int index) {
  const std::string parent = nodeScopes_.empty() ? std::string() : nodeScopes_.back();
  return scope(parent + "." + std::to_string(index), std::to_string(index));
}

std::string GraphBuilder::scopePath() const {
  std::string p;
  for (const auto& s : nodeScopes_)
    if (!s.empty()) p += "/" + s;
  return p;
}

std::string GraphBuilder::weightName(const std::string& name) const {
  std::string p;
  for (const auto& s : weightScopes_)
    if (!s.empty()) p += s + ".";
  return p + name;
}

Value* GraphBuilder::input(const std::string& name, DType dtype, std::vector<Dim> dims) {
  if (!g_) return placeholder_;
  return g_->addInput(name, ValueType::tensor(dtype, Shape(std::move(dims))));
}

Value* GraphBuilder::weight(const std::string& name, const std::vector<int64_t>& dims, Init init) {
  const std::string full = weightName(name);
  uint64_t state = options_.seed ^ fnv1a(full);
  splitmix64(state);  // decorrelates nearby seeds
  const float width = init.hi - init.lo;
  // Chunks arrive in order, so one running state gives the same values as a single pass.
  return tensorWeight(full, dims, [&](size_t, std::span<float> out) {
    for (float& x : out) x = init.lo + width * static_cast<float>(splitmix64(state) >> 40) * 0x1.0p-24f;
  });
}

Value* GraphBuilder::buffer(const std::string& name, const std::vector<int64_t>& dims, const Fill& fill) {
  return tensorWeight(weightName(name), dims, fill);
}

Value* GraphBuilder::tensorWeight(const std::string& name, const std::vector<int64_t>& dims, const Fill& fill) {
  const auto numel = checkedProduct(dims);
  if (!numel) throw std::invalid_argument("weight '" + name + "' is too large");
  weightBytes_ += static_cast<uint64_t>(*numel) * sizeof(float);
  if (!g_) return placeholder_;
  if (!options_.weights) return g_->addInput(name, ValueType::tensor(DType::Float, Shape::ofStatic(dims)));
  // Filled a chunk at a time into the byte string the Tensor adopts, so a big table is never held twice.
  std::string bytes(static_cast<size_t>(*numel) * sizeof(float), '\0');
  std::vector<float> chunk;
  for (size_t at = 0; at < static_cast<size_t>(*numel); at += chunk.size()) {
    chunk.resize(std::min<size_t>(size_t{1} << 16, static_cast<size_t>(*numel) - at));
    fill(at, chunk);
    std::memcpy(bytes.data() + at * sizeof(float), chunk.data(), chunk.size() * sizeof(float));
  }
  return g_->addInitializer(name, Tensor::fromBytes(DType::Float, dims, std::move(bytes)));
}

Value* GraphBuilder::constant(const std::string& name, Tensor t) {
  if (!g_) return placeholder_;
  auto [it, fresh] = constants_.emplace(name, nullptr);
  if (fresh) it->second = g_->addInitializer(name, std::move(t));
  return it->second;
}

Value* GraphBuilder::ints(const std::vector<int64_t>& v) {
  std::string name = "const_int64_[";
  for (size_t i = 0; i < v.size(); ++i) name += (i ? "," : "") + std::to_string(v[i]);
  return constant(name + "]", Tensor::fromVector(DType::Int64, {static_cast<int64_t>(v.size())}, v));
}

Value* GraphBuilder::scalarInt(int64_t v) {
  return constant("const_int64_" + std::to_string(v), Tensor::fromVector(DType::Int64, {}, std::vector<int64_t>{v}));
}

Value* GraphBuilder::scalar(float v) {
  return constant("const_fp32_" + formatFloat(v), Tensor::fromVector(DType::Float, {}, std::vector<float>{v}));
}

void GraphBuilder::output(Value* v, const std::string& name) {
  if (!g_) return;
  v->setName(name);
  g_->addOutput(v);
}

Value* GraphBuilder::op(const std::string& opType, const std::vector<Value*>& inputs,
                        std::vector<NamedAttribute> attrs) {
  if (!g_) return placeholder_;
  std::string name, output;
  if (options_.names == "scoped") {
    // torch.onnx names a node after its module scope and op, numbering repeats within the scope.
    const std::string base = scopePath() + "/" + opType;
    const int n = nodeNameCount_[base]++;
    name = n ? base + "_" + std::to_string(n) : base;
    output = name + "_output_0";
  } else {
    // Older exporters number nodes and tensors graph-wide; without names only the tensors are numbered.
    const std::string number = std::to_string(++nodeNumber_);
    if (options_.names == "numbered") name = opType + "_" + number;
    output = number;
  }
  Node* node = g_->addNode(opType, inputs, std::vector<std::string>{output}, name);
  for (auto& a : attrs) node->setAttr(std::move(a.name), std::move(a.value));
  return node->output(0);
}

Value* GraphBuilder::reduceMean(Value* x, std::vector<int64_t> axes, bool keepdims) {
  // Opset 13-17 ReduceMean takes axes as an attribute (an input only from opset 18).
  return op("ReduceMean", {x}, {intsAttr("axes", std::move(axes)), intAttr("keepdims", keepdims ? 1 : 0)});
}

Value* GraphBuilder::slice(Value* x, const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
                           const std::vector<int64_t>& axes) {
  return op("Slice", {x, ints(starts), ints(ends), ints(axes)});
}

Value* GraphBuilder::conv(Value* x, const std::string& name, int64_t cin, int64_t cout, int64_t kernel,
                          int64_t stride, int64_t pad, int64_t group, bool bias) {
  auto s = scope(name);
  const int64_t fanIn = cin / group * kernel * kernel;
  std::vector<Value*> inputs{x, weight("weight", {cout, cin / group, kernel, kernel}, Init::fanIn(fanIn))};
  if (bias) inputs.push_back(weight("bias", {cout}, Init::bias(fanIn)));
  return op("Conv", inputs,
            {intsAttr("dilations", {1, 1}), intAttr("group", group), intsAttr("kernel_shape", {kernel, kernel}),
             intsAttr("pads", {pad, pad, pad, pad}), intsAttr("strides", {stride, stride})});
}

Value* GraphBuilder::batchNorm(Value* x, const std::string& name, int64_t channels) {
  auto s = scope(name);
  // Running variance must stay positive (it goes under a square root); the rest stays near identity.
  Value* gamma = weight("weight", {channels}, Init::around(1.0f, 0.1f));
  Value* beta = weight("bias", {channels}, Init::around(0.0f, 0.1f));
  Value* mean = weight("running_mean", {channels}, Init::around(0.0f, 0.1f));
  Value* var = weight("running_var", {channels}, Init::range(0.5f, 1.5f));
  return op("BatchNormalization", {x, gamma, beta, mean, var}, {floatAttr("epsilon", 1e-5f), floatAttr("momentum", 0.9f)});
}

Value* GraphBuilder::linear(Value* x, const std::string& name, int64_t in, int64_t out, bool bias) {
  auto s = scope(name);
  Value* y = matMul(x, weight("weight", {in, out}, Init::fanIn(in)));
  return bias ? add(y, weight("bias", {out}, Init::bias(in))) : y;
}

Value* GraphBuilder::gemm(Value* x, const std::string& name, int64_t in, int64_t out) {
  auto s = scope(name);
  Value* w = weight("weight", {out, in}, Init::fanIn(in));
  Value* b = weight("bias", {out}, Init::bias(in));
  return op("Gemm", {x, w, b}, {floatAttr("alpha", 1.0f), floatAttr("beta", 1.0f), intAttr("transB", 1)});
}

std::vector<int> distributeBlocks(int total, const std::vector<int>& base) {
  int baseSum = 0;
  for (int b : base) baseSum += b;
  std::vector<int> counts(base.size());
  auto share = [&](size_t i) { return static_cast<double>(total) * base[i] / baseSum; };
  int sum = 0;
  for (size_t i = 0; i < base.size(); ++i) sum += counts[i] = std::max(1, static_cast<int>(std::floor(share(i))));
  // Hand out what is left to the stages furthest below their share (the earliest one on ties).
  while (sum < total) {
    size_t best = 0;
    for (size_t i = 1; i < base.size(); ++i)
      if (share(i) - counts[i] > share(best) - counts[best]) best = i;
    ++counts[best];
    ++sum;
  }
  return counts;
}

}  // namespace kiln::samples
