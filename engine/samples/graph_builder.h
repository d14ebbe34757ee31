#pragma once
// A small helper for writing the sample models the way torch.onnx.export lays them out: nodes carry hierarchical
// module scopes ("/layer1/layer1.0/conv1/Conv"), outputs are "<node>_output_<i>", weights are named like state-dict
// keys ("layer1.0.conv1.weight"), and shape/axis/scalar constants are initializers shared by content.
//
// A builder made without a model only counts weight bytes: every call returns a placeholder value and nothing is
// allocated, so buildSample() can refuse an oversized model before building it.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ir/model.h"
#include "samples/sample_models.h"

namespace kiln::samples {

// Values of a learned tensor: uniform in [lo, hi].
struct Init {
  float lo = 0, hi = 0;
  static Init around(float centre, float spread) { return {centre - spread, centre + spread}; }
  static Init range(float low, float high) { return {low, high}; }
  // Variance gain² / inputs (uniform in ±sqrt(3 / inputs) · gain): activations keep their scale layer to layer.
  static Init fanIn(int64_t inputs, float gain = 1.0f);
  // PyTorch's default Linear/Conv bias: uniform in ±1/sqrt(inputs).
  static Init bias(int64_t inputs);
};

NamedAttribute intAttr(std::string name, int64_t v);
NamedAttribute floatAttr(std::string name, float v);
NamedAttribute intsAttr(std::string name, std::vector<int64_t> v);

class GraphBuilder {
 public:
  // model == nullptr: count weight bytes only.
  GraphBuilder(Model* model, const SampleOptions& options);
  ~GraphBuilder();
  GraphBuilder(const GraphBuilder&) = delete;
  GraphBuilder& operator=(const GraphBuilder&) = delete;

  uint64_t weightBytes() const { return weightBytes_; }

  // A module scope: `nodeSegment` goes into node names, `weightSegment` (may be empty) into weight names. They
  // differ for children of a called Sequential: node scope "layer1.0", state-dict segment "0".
  class [[nodiscard]] Scope {
   public:
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    friend class GraphBuilder;
    explicit Scope(GraphBuilder& b) : b_(b) {}
    GraphBuilder& b_;
  };
  // An empty module name opens a scope that adds nothing (module helpers called inside an item()).
  Scope scope(const std::string& module) { return scope(module, module); }
  Scope scope(const std::string& nodeSegment, const std::string& weightSegment);
  // Child `index` of the Sequential whose scope is innermost: node scope "features.1", state-dict segment "1".
  Scope item(int index);

  // --- tensors
  Value* input(const std::string& name, DType dtype, std::vector<Dim> dims);
  // "<scope weight path>.<name>": an initializer with deterministic values, or a graph input when weights are off.
  Value* weight(const std::string& name, const std::vector<int64_t>& dims, Init init);
  // Like weight(), with values computed by `fill` (non-learned buffers such as rotary tables). `fill` gets
  // consecutive chunks: the flat index of the chunk's first element and the chunk to write.
  using Fill = std::function<void(size_t offset, std::span<float> chunk)>;
  Value* buffer(const std::string& name, const std::vector<int64_t>& dims, const Fill& fill);
  // Constants are always initializers (even without weights), shared by value.
  Value* ints(const std::vector<int64_t>& v);  // 1-D int64
  Value* scalarInt(int64_t v);
  Value* scalar(float v);
  void output(Value* v, const std::string& name);

  // --- nodes: "<scope>/<op>", suffixed _1, _2... when the scope already has one
  Value* op(const std::string& opType, const std::vector<Value*>& inputs, std::vector<NamedAttribute> attrs = {});
  Value* add(Value* a, Value* b) { return op("Add", {a, b}); }
  Value* sub(Value* a, Value* b) { return op("Sub", {a, b}); }
  Value* mul(Value* a, Value* b) { return op("Mul", {a, b}); }
  Value* div(Value* a, Value* b) { return op("Div", {a, b}); }
  Value* matMul(Value* a, Value* b) { return op("MatMul", {a, b}); }
  Value* relu(Value* x) { return op("Relu", {x}); }
  Value* reshape(Value* x, const std::vector<int64_t>& shape) { return op("Reshape", {x, ints(shape)}); }
  Value* transpose(Value* x, std::vector<int64_t> perm) { return op("Transpose", {x}, {intsAttr("perm", std::move(perm))}); }
  Value* unsqueeze(Value* x, const std::vector<int64_t>& axes) { return op("Unsqueeze", {x, ints(axes)}); }
  Value* softmax(Value* x, int64_t axis) { return op("Softmax", {x}, {intAttr("axis", axis)}); }
  Value* reduceMean(Value* x, std::vector<int64_t> axes, bool keepdims = true);
  Value* slice(Value* x, const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
               const std::vector<int64_t>& axes);
  Value* concat(const std::vector<Value*>& xs, int64_t axis) { return op("Concat", xs, {intAttr("axis", axis)}); }
  Value* gather(Value* data, Value* indices, int64_t axis = 0) { return op("Gather", {data, indices}, {intAttr("axis", axis)}); }
  Value* cast(Value* x, DType to) { return op("Cast", {x}, {intAttr("to", dtypeToOnnx(to))}); }

  // --- modules (each in its own scope `name`; "" for none)
  Value* conv(Value* x, const std::string& name, int64_t cin, int64_t cout, int64_t kernel, int64_t stride,
              int64_t pad, int64_t group = 1, bool bias = false);
  Value* batchNorm(Value* x, const std::string& name, int64_t channels);
  // nn.Linear on a 3-D input exports as MatMul with the transposed weight [in, out] (+ Add bias).
  Value* linear(Value* x, const std::string& name, int64_t in, int64_t out, bool bias = true);
  // nn.Linear on a 2-D input exports as Gemm(transB=1) with the weight as stored, [out, in].
  Value* gemm(Value* x, const std::string& name, int64_t in, int64_t out);

 private:
  std::string scopePath() const;
  std::string weightName(const std::string& name) const;
  Value* tensorWeight(const std::string& name, const std::vector<int64_t>& dims, const Fill& fill);
  Value* constant(const std::string& name, Tensor t);

  Model* model_;
  Graph* g_ = nullptr;
  SampleOptions options_;
  uint64_t weightBytes_ = 0;
  std::vector<std::string> nodeScopes_, weightScopes_;
  std::map<std::string, int> nodeNameCount_;
  int64_t nodeNumber_ = 0;  // names other than "scoped"
  std::map<std::string, Value*> constants_;
  // Counting mode hands out this value for everything.
  std::unique_ptr<Graph> scratch_;
  Value* placeholder_ = nullptr;
};

// Splits `total` blocks over stages in proportion to `base`, each stage getting at least one.
std::vector<int> distributeBlocks(int total, const std::vector<int>& base);

// The sample models, one .cpp each; `layers` is already resolved (>= 1).
void buildResNet50(GraphBuilder& b, int layers);
void buildMobileNetV2(GraphBuilder& b, int layers);
void buildBertBase(GraphBuilder& b, int layers);
void buildLlama(GraphBuilder& b, int layers);

}  // namespace kiln::samples
