#include "emulator/model_inputs.h"

#include "emulator/reference_executor.h"

#include <filesystem>
#include <random>
#include <stdexcept>

#include "emulator/reference_executor.h"
#include "util/load_error.h"
#include "io/tensor_file.h"
#include "options/options.h"
#include "util/units.h"

namespace kiln {

std::vector<const Value*> fedInputs(const Graph& g) {
  std::vector<const Value*> fed;
  for (const Value* v : g.inputs())
    if (!v->constant()) fed.push_back(v);
  return fed;
}

namespace {

template <typename T>
std::string bytesOf(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

// The concrete dims random data for input `v` gets, and its size in bytes.
struct RandomShape {
  std::vector<int64_t> dims;
  int64_t bytes = 0;
};

RandomShape randomShape(const Value& v, const std::map<std::string, int64_t>& bound) {
  const ValueType& t = v.type();
  if (!t.isTensor() || t.dtype == DType::Undefined || !t.shape.rankKnown())
    throw std::runtime_error("input '" + v.name() + "': element type or rank unknown (" + t.toString() +
                             "); give the data with --inputs");
  RandomShape r;
  for (const Dim& d : t.shape.dims()) {
    if (d.isStatic())
      r.dims.push_back(d.value);
    else if (auto it = bound.find(d.symbol); d.isSymbolic() && it != bound.end())
      r.dims.push_back(it->second);
    else
      r.dims.push_back(1);
  }
  const auto n = checkedProduct(r.dims);
  const int size = dtypeSize(t.dtype);
  if (!n || size <= 0 || *n > INT64_MAX / size)
    throw std::runtime_error("input '" + v.name() + "': " + Shape::ofStatic(r.dims).toString() + " is too large");
  r.bytes = *n * size;
  return r;
}

Tensor randomTensor(const Value& v, std::mt19937& rng, const std::vector<int64_t>& dims, int64_t intRange) {
  const ValueType& t = v.type();
  const auto n = checkedProduct(dims);
  const auto count = static_cast<size_t>(*n);
  std::uniform_real_distribution<float> real(-1.0f, 1.0f);
  std::uniform_int_distribution<int64_t> integer(0, std::max<int64_t>(intRange, 1) - 1);
  switch (t.dtype) {
    case DType::Float:
    case DType::Float16:
    case DType::BFloat16:
    case DType::Double: {
      std::vector<float> f(count);
      for (float& x : f) x = real(rng);
      if (t.dtype == DType::Float) return Tensor::fromBytes(t.dtype, dims, bytesOf(f));
      if (t.dtype == DType::Double) return Tensor::fromBytes(t.dtype, dims, bytesOf(std::vector<double>(f.begin(), f.end())));
      std::vector<uint16_t> h(count);
      for (size_t i = 0; i < count; ++i) h[i] = t.dtype == DType::Float16 ? floatToHalf(f[i]) : floatToBfloat16(f[i]);
      return Tensor::fromBytes(t.dtype, dims, bytesOf(h));
    }
    case DType::Bool: {
      std::string b(count, '\0');
      for (char& c : b) c = static_cast<char>(rng() & 1u);
      return Tensor::fromBytes(t.dtype, dims, std::move(b));
    }
    case DType::Int64: {
      std::vector<int64_t> x(count);
      for (int64_t& e : x) e = integer(rng);
      return Tensor::fromBytes(t.dtype, dims, bytesOf(x));
    }
    case DType::Int32: {
      std::vector<int32_t> x(count);
      for (int32_t& e : x) e = static_cast<int32_t>(integer(rng));
      return Tensor::fromBytes(t.dtype, dims, bytesOf(x));
    }
    case DType::Int8:
    case DType::UInt8: {
      std::string x(count, '\0');
      for (char& e : x) e = static_cast<char>(integer(rng) & 0x7f);
      return Tensor::fromBytes(t.dtype, dims, std::move(x));
    }
    default:
      throw std::runtime_error("input '" + v.name() + "': no random data for " + std::string(dtypeName(t.dtype)) +
                               "; give the data with --inputs");
  }
}

}  // namespace

std::vector<Tensor> randomInputs(const Graph& g, uint32_t seed, const std::map<std::string, int64_t>& dims,
                                 int64_t intRange, int64_t maxTotalBytes) {
  // Every shape first: a model whose weights are graph inputs (exported without them) can ask for far more data
  // than memory holds, and that is refused before any of it is generated.
  // Inputs that no output depends on get no data (the reference mode does not run what reads them).
  std::vector<RandomShape> shapes;
  double total = 0;
  const std::unordered_set<const Node*> needed = nodesTheOutputsNeed(g);
  for (const Value* v : g.inputs()) {
    shapes.push_back(v->constant() || !outputsNeed(*v, needed) ? RandomShape{} : randomShape(*v, dims));
    total += static_cast<double>(shapes.back().bytes);
  }
  if (total > static_cast<double>(maxTotalBytes))
    throw std::runtime_error("random inputs need " + formatBytes(total) + " in all, over " + kEmulatorInputKey + " (" +
                             formatBytes(static_cast<double>(maxTotalBytes)) +
                             "); weights exported as graph inputs count too. Give the data (--inputs), smaller "
                             "--dim values or a higher limit");
  std::mt19937 rng(seed);
  std::vector<Tensor> inputs;
  const auto& in = g.inputs();
  for (size_t i = 0; i < in.size(); ++i)
    inputs.push_back(in[i]->constant() || !outputsNeed(*in[i], needed)
                         ? Tensor()
                         : randomTensor(*in[i], rng, shapes[i].dims, intRange));
  return inputs;
}

std::string inputShapeSpec(const Graph& g, const std::map<std::string, int64_t>& dims, std::string* bound) {
  std::string spec, used;
  for (const Value* v : fedInputs(g)) {
    if (!v->type().isTensor() || !v->type().shape.rankKnown() || v->type().shape.isStatic()) continue;
    std::string dimsText;
    for (const Dim& d : v->type().shape.dims()) {
      int64_t e = d.isStatic() ? d.value : 1;
      if (auto it = dims.find(d.symbol); d.isSymbolic() && it != dims.end()) e = it->second;
      if (d.isSymbolic() && used.find(d.symbol + "=") == std::string::npos)
        used += (used.empty() ? "" : ", ") + d.symbol + "=" + std::to_string(e);
      dimsText += (dimsText.empty() ? "" : ",") + std::to_string(e);
    }
    spec += (spec.empty() ? "" : ";") + v->name() + ":" + dimsText;
  }
  if (bound) *bound = used;
  return spec;
}

std::vector<Tensor> inputsByName(const Graph& from, const std::vector<Tensor>& tensors, const Graph& to) {
  std::vector<Tensor> out;
  for (const Value* v : to.inputs()) {
    Tensor t;
    bool named = false;
    for (size_t i = 0; i < from.inputs().size() && i < tensors.size(); ++i)
      if (from.inputs()[i]->name() == v->name()) {
        named = true;
        t = tensors[i].valid() ? tensors[i] : from.inputs()[i]->constant() ? *from.inputs()[i]->constant() : Tensor();
      }
    if (!t.valid() && v->constant()) t = *v->constant();
    // An input no output depends on has no data (randomInputs); the compiled graph does not read it either.
    if (!t.valid() && !(named && !v->hasUses()))
      throw std::runtime_error("input '" + v->name() + "' has no counterpart in the original model");
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<Tensor> readInputFiles(const Graph& g, const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw LoadError(dir, "not a directory");
  const std::vector<const Value*> fed = fedInputs(g);
  std::vector<Tensor> inputs(g.inputs().size());
  auto slotOf = [&](const Value* v) {
    for (size_t i = 0; i < g.inputs().size(); ++i)
      if (g.inputs()[i] == v) return i;
    return g.inputs().size();
  };
  for (size_t i = 0; i < fed.size(); ++i) {
    const fs::path file = fs::path(dir) / ("input_" + std::to_string(i) + ".pb");
    if (!fs::exists(file, ec)) throw LoadError(file.string(), "missing (input '" + fed[i]->name() + "')");
    NamedTensor t = readTensorFile(file.string());
    const Value* target = fed[i];
    for (const Value* v : fed)
      if (!t.name.empty() && v->name() == t.name) target = v;
    inputs[slotOf(target)] = std::move(t.tensor);
  }
  return inputs;
}

std::vector<Tensor> inputsFromArrays(const Graph& g, const std::vector<std::pair<std::string, Tensor>>& arrays,
                                     const std::string& file) {
  std::vector<Tensor> inputs(g.inputs().size());
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const Value* v = g.inputs()[i];
    if (v->constant()) continue;
    for (const auto& [name, t] : arrays)
      if (name == v->name()) inputs[i] = t;
    if (!inputs[i].valid()) throw LoadError(file, "holds no array named '" + v->name() + "' (a graph input)");
  }
  return inputs;
}

}  // namespace kiln
