#pragma once
// The emulator's reference mode: a graph run node by node on the reference kernels, every tensor in its own buffer.
// It is the yardstick the compiled mode (one arena laid out by the memory plan) and every pass are compared against.
//
// Control flow runs here rather than in kernels, because it needs graphs and scopes: If picks a branch, Loop and
// Scan run their body per iteration with loop-carried values and stacked scan outputs. A subgraph reads values of
// the enclosing graphs directly (implicit captures), so scopes chain to their parents.
//
// An op without a kernel may still run when the op is defined by a function body (libonnx's ops such as
// LayerNormalization or SoftmaxCrossEntropyLoss, a model's local functions): `functions` expands such a node into
// a graph of simpler ops, which runs in its place.
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <vector>

#include "kernels/kernel.h"
#include "ir/graph.h"

namespace kiln {

struct ConstantNodes;

// The graph holds an op the emulator cannot run (no kernel, no function body). what(): "not emulatable: op X".
class NotEmulatable : public std::runtime_error {
 public:
  explicit NotEmulatable(const std::string& op) : std::runtime_error("not emulatable: op " + op), op_(op) {}
  const std::string& op() const { return op_; }

 private:
  std::string op_;
};

// A node's kernel or control flow refused the data it got (a kernel wider than the padded input, an index out of
// range): what() is the kernel's message. `nodes()` runs from the node that failed out to the top-level node
// holding it (If, Loop, a function op), for telling which inputs led there (emulator/input_influence.h). The
// pointers are identities to look up among a model's nodes, never to dereference: a function body's nodes are
// gone once the exception leaves the executor.
class NodeFailed : public std::runtime_error {
 public:
  NodeFailed(const std::string& what, const Node* node) : std::runtime_error(what), nodes_{node} {}
  void enclosedBy(const Node* node) { nodes_.push_back(node); }
  const std::vector<const Node*>& nodes() const { return nodes_; }

 private:
  std::vector<const Node*> nodes_;
};

// Turns a node without a kernel into an equivalent graph (inputs and outputs positionally matching the node's), or
// null when the op has no function body. `inputs` are the tensors the node is about to run on (element types decide
// some bodies); empty when asking ahead of a run, when the declared types are used instead.
using FunctionExpander = std::function<std::shared_ptr<Graph>(const Node&, const std::vector<const Tensor*>& inputs)>;
// How one graph runs: its nodes in order, which of them its outputs need, after which step each value is read for the
// last time, its conv chains (reference_executor.cpp).
struct GraphRunPlan;

struct ExecutionOptions {
  KernelLimits kernel;
  // A Loop without trip count and condition, or a wrong one, must not run forever.
  int64_t maxLoopIterations = 1'000'000;
  // Function bodies nest (a function op inside a function); recursion beyond this is a malformed model.
  int maxExpansionDepth = 16;
  // ai.onnx opset of the model: Scan changed its inputs in opset 9.
  int64_t opset = 17;
  // Graph inputs must match the declared element types and static extents (off for suites whose declarations are
  // known to be looser than their data).
  bool checkInputTypes = true;
  // Compiled mode: the largest arena it allocates.
  int64_t maxArenaBytes = int64_t{4} << 30;
  FunctionExpander functions;
  // Called after each node of the top-level graph ran, with its outputs (reference mode): for diagnoses that
  // need the intermediate values without keeping them all (the first value beyond fp16's range).
  std::function<void(const Node&, const std::vector<Tensor>&)> afterNode;
  // Asked before each node of the top-level graph runs: outputs it computed before, when the caller knows the node
  // and its inputs are unchanged since (kiln verify's pass-by-pass runs), or null to run it.
  std::function<const std::vector<Tensor>*(const Node&)> reuse;
  // runReference: look for the first fp32 value beyond fp16's range (ReferenceRun::beyondFp16). emulateModel sets it
  // when the compiled graph computes in fp16; it reads every intermediate once, so it is off otherwise.
  bool watchFp16Range = false;
  // Nodes of the top-level graph computed ahead of the run (emulator/constant_nodes.h): it reads their outputs
  // instead of running them. Null: every node runs.
  std::shared_ptr<const ConstantNodes> constants;
  // The top-level graph's plan, made ahead (planGraphRun) as ONNX Runtime makes its execution plan when it creates a
  // session, so the run's clock does not count it. Null: planned as the run starts.
  std::shared_ptr<const GraphRunPlan> plan;
  // runReference and emulateCompiled: runs of each mode timed (`kiln run --repeat`). The first gives the results
  // and the memory measures; the time reported is the fastest run's, the first's beside it (a first run in a
  // process touches its memory and code for the first time: ONNX Runtime's timings likewise follow a warm-up).
  int timedRuns = 1;
};

class Options;
// `base` with an option set's resource limits: emulator.max_arena_bytes, emulator.max_tensor_bytes.
ExecutionOptions withLimits(ExecutionOptions base, const Options& options);

// The plan a run of `g` at the top level with `options` follows (their afterNode and reuse decide whether conv chains
// run as one call). Throws std::runtime_error for a graph with a cycle.
std::shared_ptr<const GraphRunPlan> planGraphRun(const Graph& g, const ExecutionOptions& options);

class ReferenceExecutor {
 public:
  explicit ReferenceExecutor(ExecutionOptions options = {});
  // Runs `g` on `inputs` (one per graph input, in order). Returns one tensor per graph output.
  // Throws NotEmulatable, NodeFailed for a kernel or data error (its message names the node), or
  // std::runtime_error for inputs that do not fit the graph.
  std::vector<Tensor> run(const Graph& g, const std::vector<Tensor>& inputs) const;
  // Runs the one node `n` (If, Loop and Scan included) on `in`; the values its bodies read from the graphs
  // around it come from `outer` (null for one it does not have). The compiled mode runs control flow this way.
  std::vector<Tensor> runNode(const Node& n, const std::vector<const Tensor*>& in,
                              const std::function<const Tensor*(const Value*)>& outer) const;
  const ExecutionOptions& options() const { return options_; }

 private:
  ExecutionOptions options_;
};

// Kiln's own ops that carry their definition as a graph attribute `body` (kiln:FusedElementwise: the chain of ops
// it replaced, inputs and outputs positionally the node's, no captures); null for any other node.
const Graph* definingBody(const Node& n);

// The nodes of `g` its outputs depend on (through inputs and what bodies capture). The reference mode runs only
// these: an export's leftover branch, or a model without outputs, costs nothing and cannot fail a run.
std::unordered_set<const Node*> nodesTheOutputsNeed(const Graph& g);
// Whether a value of `g` (a graph input, say) is read by a node in `needed` or is itself an output of `g`.
bool outputsNeed(const Value& v, const std::unordered_set<const Node*>& needed);

// The first op in `g` (or its subgraphs) that has neither a kernel, a control-flow implementation nor a function
// body; empty when every op can run.
std::string firstUnsupportedOp(const Graph& g, const FunctionExpander& functions = {});

}  // namespace kiln
