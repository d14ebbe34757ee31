#include "ir/opdefs/op_registry.h"

#include <onnx/defs/data_type_utils.h>
#include <onnx/defs/schema.h>

#include <pthread.h>

#include <algorithm>
#include <array>
#include <unordered_map>

#include "ir/opdefs/proto_convert.h"
#include "ir/graph.h"
#include "util/process_limits.h"

namespace kiln {

std::string_view computeUnitName(ComputeUnit u) {
  switch (u) {
    case ComputeUnit::Cube: return "cube";
    case ComputeUnit::Vector: return "vector";
    case ComputeUnit::AiCpu: return "aicpu";
    case ComputeUnit::Host: return "host";
  }
  return "?";
}

OpRegistry& OpRegistry::global() {
  static OpRegistry registry;
  return registry;
}

OpRegistry::OpRegistry() {
  registerKilnOps(*this);
  registerNewerOnnxOps(*this);
}

int64_t OpRegistry::libOnnxOpset() {
  static const int64_t v = [] {
    const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
    auto it = ranges.find("");
    return it == ranges.end() ? int64_t{17} : int64_t{it->second.second};
  }();
  return v;
}

int64_t OpRegistry::newestOnnxOpset() { return std::max<int64_t>(libOnnxOpset(), 26); }

RegistryWarmup::RegistryWarmup() {
  // A small stack, not the default 8 MiB: glibc keeps an ended thread's stack mapped for reuse, and under an
  // address-space limit (ulimit -v) those 8 MiB were enough to make OpenBLAS fail to start its threads later, which
  // it answers by killing the process. Registration builds its schemas on the heap.
  // Under an address-space limit the thread's malloc arena (64 MiB reserved) can fail where the main thread's heap
  // does not, and libonnx cannot retry a registration that failed half-way: the registry is then built on first use.
  if (addressSpaceLimited()) return;
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0) return;
  pthread_attr_setstacksize(&attr, 512 << 10);
  pthread_t t;
  started_ = pthread_create(
                 &t, &attr,
                 [](void*) -> void* {
                   try {
                     OpRegistry::global();
                   } catch (...) {
                     // The first real lookup builds it again on its own thread and reports the problem there.
                   }
                   return nullptr;
                 },
                 nullptr) == 0;
  // No thread to be had (a process limit): the registry is built on first use, as without a warm-up.
  if (started_) thread_ = t;
  pthread_attr_destroy(&attr);
}

RegistryWarmup::~RegistryWarmup() {
  if (started_) pthread_join(static_cast<pthread_t>(thread_), nullptr);
}

namespace {
std::string key(std::string_view domain, std::string_view type) {
  std::string k(domain == "ai.onnx" ? std::string_view() : domain);
  k += ':';
  k += type;
  return k;
}
}  // namespace


bool OpRegistry::add(OpDef def) {
  const std::string d = def.domain == "ai.onnx" ? "" : def.domain;
  if (onnx::OpSchemaRegistry::Schema(def.type, d)) return false;
  std::lock_guard lock(mutex_);
  own_[key(d, def.type)] = std::move(def);
  return true;
}

OpDef opDefFromSchema(const void* onnxSchema) {
  const auto* schema = static_cast<const onnx::OpSchema*>(onnxSchema);
  OpDef def;
  def.domain = schema->domain() == "ai.onnx" ? std::string() : schema->domain();
  def.type = schema->Name();
  def.sinceVersion = schema->SinceVersion();
  def.minInputs = schema->min_input();
  def.maxInputs = schema->max_input();
  def.minOutputs = schema->min_output();
  def.maxOutputs = schema->max_output();
  def.unit = defaultComputeUnit(def.domain, def.type);
  for (const auto& f : schema->inputs()) def.inputNames.push_back(f.GetName());
  for (const auto& f : schema->outputs()) def.outputNames.push_back(f.GetName());
  def.onnxSchema = schema;
  return def;
}

void OpRegistry::addNewerOnnx(OpDef def) {
  def.domain.clear();
  std::lock_guard lock(mutex_);
  auto& versions = newerOnnx_[def.type];
  auto at = std::find_if(versions.begin(), versions.end(),
                         [&](const OpDef& v) { return v.sinceVersion >= def.sinceVersion; });
  if (at != versions.end() && at->sinceVersion == def.sinceVersion) *at = std::move(def);
  else versions.insert(at, std::move(def));
}

const OpDef* OpRegistry::find(std::string_view domain, std::string_view type, int64_t opset) const {
  const std::string d(domain == "ai.onnx" ? std::string_view() : domain);
  std::lock_guard lock(mutex_);
  if (auto it = own_.find(key(d, type)); it != own_.end()) return &it->second;
  if (opset <= 0) return nullptr;
  // A version libonnx does not know: the newest of ours at or before the model's opset.
  if (d.empty() && opset > libOnnxOpset()) {
    if (auto it = newerOnnx_.find(type); it != newerOnnx_.end()) {
      const OpDef* best = nullptr;
      for (const OpDef& v : it->second)
        if (v.sinceVersion <= opset) best = &v;
      if (best) return best;
    }
  }
  const std::string ck = key(d, type) + ":" + std::to_string(opset);
  if (auto it = onnxCache_.find(ck); it != onnxCache_.end()) return it->second.get();
  const onnx::OpSchema* schema =
      onnx::OpSchemaRegistry::Schema(std::string(type), static_cast<int>(std::min<int64_t>(opset, INT_MAX)), d);
  std::unique_ptr<OpDef> def;
  if (schema && !schema->Deprecated()) def = std::make_unique<OpDef>(opDefFromSchema(schema));
  if (!def && d.empty()) {
    // A standard op used before the opset that added it (ONNX Runtime's exporters write LayerNormalization at
    // opsets 9 to 16; a Gelu in an opset-17 model): read as its first version, as ONNX Runtime reads it.
    // ValidityCheck says so once per op type.
    if (auto it = newerOnnx_.find(type); it != newerOnnx_.end() && !it->second.empty()) {
      def = std::make_unique<OpDef>(it->second.front());
    } else if (const onnx::OpSchema* latest =
                   onnx::OpSchemaRegistry::Schema(std::string(type), static_cast<int>(libOnnxOpset()), d);
               latest && latest->SinceVersion() > opset && !latest->Deprecated()) {
      const onnx::OpSchema* first = latest;
      while (first->SinceVersion() > 1) {
        const onnx::OpSchema* older = onnx::OpSchemaRegistry::Schema(std::string(type), first->SinceVersion() - 1, d);
        if (!older) break;
        first = older;
      }
      if (first->SinceVersion() > opset && !first->Deprecated()) def = std::make_unique<OpDef>(opDefFromSchema(first));
    }
  }
  auto* raw = def.get();
  onnxCache_.emplace(ck, std::move(def));
  return raw;
}

namespace {
// The interned onnx::DataType of a value's type. libonnx names a type by its text, which for a tensor ignores the
// shape: plain tensors (nearly every operand) come from a table built once, instead of a TypeProto with the shape
// and a locked lookup for every operand the verifier checks after every pass. Other kinds go the long way.
onnx::DataType dataTypeOf(const ValueType& t) {
  if (t.kind == ValueType::Kind::Tensor) {  // (the format is a denotation, which the text leaves out)
    static const std::array<onnx::DataType, kMaxDTypeCode + 1> tensors = [] {
      std::array<onnx::DataType, kMaxDTypeCode + 1> a{};
      for (int code = 1; code <= kMaxDTypeCode; ++code) {
        onnx::TypeProto tp;
        tp.mutable_tensor_type()->set_elem_type(code);
        try {
          a[static_cast<size_t>(code)] = onnx::Utils::DataTypeUtils::ToType(tp);
        } catch (const std::exception&) {
          // Left empty: the long way below throws for it as before.
        }
      }
      return a;
    }();
    const auto code = static_cast<size_t>(t.dtype);
    if (code < tensors.size() && tensors[code]) return tensors[code];
  }
  onnx::TypeProto tp;
  onnxio::toTypeProto(t, &tp);
  tp.clear_denotation();
  return onnx::Utils::DataTypeUtils::ToType(tp);
}
}  // namespace

std::optional<std::string> OpRegistry::checkSignature(const Node& n, int64_t opset) const {
  const OpDef* def = find(n.domain(), n.opType(), opset);
  if (!def) return std::nullopt;  // unknown ops are reported elsewhere, not invalid
  // Trailing omitted optional inputs do not count.
  int nin = static_cast<int>(n.numInputs());
  while (nin > 0 && !n.input(static_cast<size_t>(nin - 1))) --nin;
  int nout = static_cast<int>(n.numOutputs());
  while (nout > 0 && !n.output(static_cast<size_t>(nout - 1))) --nout;
  if (nin < def->minInputs || nin > def->maxInputs)
    return "has " + std::to_string(nin) + " inputs, expected " + std::to_string(def->minInputs) +
           (def->maxInputs == def->minInputs ? "" : ".." + (def->maxInputs == INT_MAX ? std::string("n") : std::to_string(def->maxInputs)));
  if (nout > def->maxOutputs)
    return "has " + std::to_string(nout) + " outputs, at most " + std::to_string(def->maxOutputs) + " allowed";
  if (!def->onnxSchema) return std::nullopt;

  // Type constraints: every actual bound to one type variable must have the same, allowed type.
  const auto* schema = static_cast<const onnx::OpSchema*>(def->onnxSchema);
  std::unordered_map<std::string, std::pair<onnx::DataType, std::string>> bound;
  std::unordered_map<std::string, std::string> unknownAt;  // type variable -> first operand of unknown element type
  const auto& constraints = schema->typeConstraintParams();  // a handful: searched, not indexed
  auto constrained = [&](const std::string& ts) {
    return std::any_of(constraints.begin(), constraints.end(),
                       [&](const onnx::OpSchema::TypeConstraintParam& c) { return c.type_param_str == ts; });
  };
  // An unknown element type (inference failed upstream) is no violation by itself, nor next to the element type the
  // file declares. An input of unknown type next to a reduced-precision float (fp16, bf16) of its type variable is:
  // that is what a precision change leaves when it narrows the operands it can see and not the one it cannot, which
  // still arrives in the file's type at run time. (An output of unknown type next to fp16 inputs is harmless.)
  auto lowPrecision = [](const Value* v) {
    return v->type().isTensor() && (v->type().dtype == DType::Float16 || v->type().dtype == DType::BFloat16);
  };
  auto unknownNextTo = [](const std::string& unknown, const std::string& known, onnx::DataType dt,
                          const std::string& ts) {
    return unknown + " has an unknown element type but " + known + " has " + *dt + " (both are " + ts +
           "): it cannot be shown to be " + *dt + " too";
  };
  auto checkOne = [&](const onnx::OpSchema::FormalParameter& formal, const Value* v, const std::string& where,
                      bool input) -> std::optional<std::string> {
    if (!v) return std::nullopt;
    const std::string& ts = formal.GetTypeStr();
    const bool homogeneous = formal.GetIsHomogeneous() && constrained(ts);
    if (!v->type().known() || (v->type().isTensor() && v->type().dtype == DType::Undefined)) {
      if (!homogeneous || !input) return std::nullopt;  // an untyped result claims nothing
      unknownAt.emplace(ts, where);
      if (auto it = bound.find(ts); it != bound.end() && it->second.first &&
                                    (*it->second.first == "tensor(float16)" || *it->second.first == "tensor(bfloat16)"))
        return unknownNextTo(where, it->second.second, it->second.first, ts);
      return std::nullopt;
    }
    if (v->type().isTensor() &&
        std::find(def->widenedTypes.begin(), def->widenedTypes.end(), dtypeToOnnx(v->type().dtype)) !=
            def->widenedTypes.end())
      return std::nullopt;  // a type this version added to the schema libonnx has
    const onnx::DataType dt = dataTypeOf(v->type());
    if (!formal.GetTypes().empty() && !formal.GetTypes().count(dt))
      return where + " has type " + *dt + ", not allowed for '" + formal.GetName() + "'";
    if (homogeneous) {
      auto [it, fresh] = bound.emplace(ts, std::make_pair(dt, where));
      if (!fresh && it->second.first != dt)
        return where + " has type " + *dt + " but " + it->second.second + " has " + *it->second.first +
               " (both are " + ts + ")";
      if (auto u = unknownAt.find(ts); u != unknownAt.end() && lowPrecision(v))
        return unknownNextTo(u->second, where, dt, ts);
    }
    return std::nullopt;
  };
  auto walk = [&](const std::vector<onnx::OpSchema::FormalParameter>& formals, const std::vector<Value*>& actuals,
                  const char* kind) -> std::optional<std::string> {
    for (size_t i = 0; i < actuals.size(); ++i) {
      if (formals.empty()) break;
      const size_t fi = std::min(i, formals.size() - 1);
      if (fi != i && formals[fi].GetOption() != onnx::OpSchema::Variadic) break;
      if (auto p = checkOne(formals[fi], actuals[i], std::string(kind) + " " + std::to_string(i),
                            std::string_view(kind) == "input"))
        return p;
    }
    return std::nullopt;
  };
  try {
    if (auto p = walk(schema->inputs(), n.inputs(), "input")) return p;
    if (auto p = walk(schema->outputs(), n.outputs(), "output")) return p;
  } catch (const std::exception&) {
    // A type libonnx cannot name (e.g. an undefined element type) is not a constraint violation.
  }
  return std::nullopt;
}

OpCost OpRegistry::cost(const Node& n, int64_t opset) const {
  const OpDef* def = find(n.domain(), n.opType(), opset);
  if (def && def->cost) return def->cost(n);
  return estimateCost(n);
}

ComputeUnit OpRegistry::unitOf(const Node& n, int64_t opset) const {
  const OpDef* def = find(n.domain(), n.opType(), opset);
  return def ? def->unit : defaultComputeUnit(n.domain(), n.opType());
}

}  // namespace kiln
