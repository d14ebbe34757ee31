#pragma once
// The op registry (GE's "metadef"): for each op type, its signature, the compute unit it runs on, cost hooks and
// type/shape inference. Standard ONNX ops come from libonnx's schemas (their inference runs over our IR through an
// InferenceContext adapter, see shape_inference.h); Kiln's own NPU ops and plugin ops are registered here in code.
#include <climits>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

class Node;

enum class ComputeUnit : uint8_t { Cube, Vector, AiCpu, Host };
std::string_view computeUnitName(ComputeUnit u);  // "cube", "vector", "aicpu", "host"

struct OpCost {
  double flops = 0;         // arithmetic operations (a multiply-add counts 2)
  double bytesRead = 0;     // input bytes (static shapes only)
  double bytesWritten = 0;  // output bytes
};

// Domain Kiln's own ops live in.
inline constexpr std::string_view kKilnDomain = "kiln";

struct OpDef {
  std::string domain;  // "" = ai.onnx
  std::string type;
  int sinceVersion = 1;
  int minInputs = 0, maxInputs = INT_MAX, minOutputs = 0, maxOutputs = INT_MAX;
  std::vector<std::string> inputNames, outputNames;  // formal parameter names ("X", "W", "B"), for display
  ComputeUnit unit = ComputeUnit::Vector;
  // Hand-written inference for non-ONNX ops: sets the node's output types; throws std::runtime_error on a bad node.
  std::function<void(Node&)> infer;
  // Optional cost override; the default estimate uses the unit and the tensor sizes.
  std::function<OpCost(const Node&)> cost;
  // libonnx schema (onnx::OpSchema) for standard ops; null for Kiln's and plugins' ops. A version newer than libonnx
  // knows whose semantics did not change (only its types widened) keeps the last schema libonnx has for inference.
  const void* onnxSchema = nullptr;
  // ONNX element type codes the version allows beyond onnxSchema's constraints (bf16, float8, int4 ... added in
  // opsets 19 to 23 to ops whose meaning stayed the same).
  std::vector<int> widenedTypes;
};

class OpRegistry {
 public:
  static OpRegistry& global();

  // The definition of domain:type as of `opset` (the model's import version of that domain), or null when unknown.
  const OpDef* find(std::string_view domain, std::string_view type, int64_t opset) const;
  // Registers an own/plugin op. Refuses (returns false) to shadow a standard ONNX op.
  bool add(OpDef def);
  // Registers one version of a standard ai.onnx op newer than libonnx knows (onnx_newer_ops.h); `find` returns it
  // for models whose ai.onnx opset is at least its sinceVersion, until a later one replaces it.
  void addNewerOnnx(OpDef def);
  // The newest ai.onnx opset libonnx has schemas for (17 for Debian 12's 1.12), and the newest Kiln knows.
  static int64_t libOnnxOpset();
  static int64_t newestOnnxOpset();
  // Input/output arity and type constraints of a node against its definition; the problem or nullopt.
  std::optional<std::string> checkSignature(const Node& n, int64_t opset) const;
  // Cost estimate of a node (uses its def's override when present).
  OpCost cost(const Node& n, int64_t opset) const;
  ComputeUnit unitOf(const Node& n, int64_t opset) const;

 private:
  OpRegistry();
  mutable std::mutex mutex_;
  std::map<std::string, OpDef, std::less<>> own_;  // "domain:type"
  mutable std::map<std::string, std::unique_ptr<OpDef>, std::less<>> onnxCache_;  // "domain:type:opset"
  std::map<std::string, std::vector<OpDef>, std::less<>> newerOnnx_;  // type -> versions after libonnx's, ascending
};

// Builds the global registry on another thread from construction on, so that libonnx's schema registration (every
// version of every standard op, about 6 ms, needed before the first node is read) overlaps reading and parsing the
// model instead of adding to it. The first lookup waits for it if it is not done. Joined on destruction.
class RegistryWarmup {
 public:
  RegistryWarmup();
  ~RegistryWarmup();
  RegistryWarmup(const RegistryWarmup&) = delete;
  RegistryWarmup& operator=(const RegistryWarmup&) = delete;

 private:
  unsigned long thread_ = 0;  // pthread_t
  bool started_ = false;
};

// Compute unit a standard op runs on (Cube for Conv/MatMul-like, AI CPU for data-dependent and control-flow ops,
// Host for pure shape bookkeeping, Vector otherwise).
ComputeUnit defaultComputeUnit(std::string_view domain, std::string_view type);
// Default cost estimate from the op type and the node's static tensor types.
OpCost estimateCost(const Node& n);
// Whether estimateCost has a formula of its own for the type (others cost one operation per output element).
bool hasOwnCostFormula(std::string_view op);
// Registers Kiln's own ops (TransData, ...). Called once by OpRegistry's constructor.
void registerKilnOps(OpRegistry& registry);
// The fused ops of the built-in fusion rules (kiln_fused_ops.cpp); called by registerKilnOps.
void registerKilnFusedOps(OpRegistry& registry);
// The definition libonnx's schema (an onnx::OpSchema) gives: arity, names, unit, the schema for inference.
OpDef opDefFromSchema(const void* onnxSchema);
// Every ai.onnx op version of opsets 18 to 26 (onnx_newer_ops.cpp); called by OpRegistry's constructor.
void registerNewerOnnxOps(OpRegistry& registry);

}  // namespace kiln
