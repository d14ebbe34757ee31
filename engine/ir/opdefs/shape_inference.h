#pragma once
// Type and shape inference over the IR. Standard ONNX ops use libonnx's own inference functions through an
// InferenceContext adapter over our nodes (no round trip through ModelProto); data propagation (Shape -> Gather ->
// Concat -> Reshape chains) uses libonnx's DataPropagationContext the same way. Kiln's own ops use their OpDef's
// hand-written inference. Unknown ops keep the types the file declared (value_info) and are reported.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace kiln {

class Graph;
class Node;
struct Model;

struct InferenceOptions {
  // Constant inputs up to this many elements are handed to inference functions (Reshape's shape, Slice's starts).
  int64_t maxConstantElements = 1 << 16;
  // Stop reporting after this many warnings (the count is still kept).
  size_t maxWarnings = 200;
  // For ops no schema or OpDef infers (ONNX Runtime's com.microsoft ops, the old experimental ops): sets the
  // node's output types and returns true when it can. The InferShape pass hands in the emulator's kernels run on
  // placeholder inputs (kernels/kernel_shape_probe.h); without one such ops keep their declared types.
  std::function<bool(Node&)> probe;
  // Stop visiting nodes once more than this many have failed: for a caller that only asks whether a binding fails
  // more than a baseline (passes/prepare/binding_fit.cpp). The nodes after that keep their types.
  size_t stopAfterFailures = SIZE_MAX;
  // The graph's nodes in topological order, when the caller has them already: a binding fit probes one graph under
  // several bindings, and its nodes stay put between probes. Computed when null (subgraphs always are).
  const std::vector<Node*>* order = nullptr;
};

struct InferenceReport {
  size_t nodesVisited = 0;
  size_t nodesInferred = 0;  // an inference function ran without error
  size_t nodesFailed = 0;    // it threw (message in warnings)
  bool stopped = false;      // stopAfterFailures was reached: not every node was visited
  std::map<std::string, int> unknownOps;  // qualified op type -> count
  std::vector<std::string> warnings;
  size_t warningsDropped = 0;
};

InferenceReport inferShapes(Model& model, const InferenceOptions& options = {});
InferenceReport inferShapes(Graph& graph, const std::map<std::string, int64_t>& opsets,
                            const InferenceOptions& options = {});

}  // namespace kiln
