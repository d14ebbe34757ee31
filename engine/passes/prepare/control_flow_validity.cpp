#include "passes/prepare/control_flow_validity.h"

#include "ir/graph.h"

namespace kiln {
namespace {

const Graph* body(const Node& n, std::string_view attr) {
  const Attribute* a = n.attr(attr);
  const Attribute::GraphPtr* g = a ? a->get<Attribute::GraphPtr>() : nullptr;
  return g ? g->get() : nullptr;
}

std::string count(size_t n, const char* what) { return std::to_string(n) + " " + what + (n == 1 ? "" : "s"); }

std::string ifProblem(const Node& n) {
  for (const char* branch : {"then_branch", "else_branch"}) {
    const Graph* g = body(n, branch);
    if (!g) return std::string("has no ") + branch + " (If needs both branches)";
    if (g->outputs().size() != n.numOutputs())
      return std::string(branch) + " gives " + count(g->outputs().size(), "output") + " but the node has " +
             count(n.numOutputs(), "output");
  }
  return {};
}

std::string loopProblem(const Node& n) {
  const Graph* g = body(n, "body");
  if (!g) return "has no body";
  if (n.numInputs() < 2) return "has " + count(n.numInputs(), "input") + "; Loop takes M, cond and its carried values";
  const size_t carried = n.numInputs() - 2;
  if (g->inputs().size() != 2 + carried)
    return "body takes " + count(g->inputs().size(), "input") + " but the node carries " + count(carried, "value") +
           " (the body takes the iteration, the condition and each carried value: " + std::to_string(2 + carried) + ")";
  if (g->outputs().size() < 1 + carried)
    return "body gives " + count(g->outputs().size(), "output") + ", fewer than the condition and " +
           count(carried, "carried value");
  if (g->outputs().size() != 1 + n.numOutputs())
    return "body gives " + count(g->outputs().size(), "output") + " but the node has " + count(n.numOutputs(), "output") +
           " (the body gives the condition, then one per node output)";
  return {};
}

std::string scanProblem(const Node& n) {
  const Graph* g = body(n, "body");
  if (!g) return "has no body";
  // Scan-8 passes sequence_lens to the node only; from Scan-9 every node input reaches the body.
  if (g->inputs().size() != n.numInputs() && g->inputs().size() + 1 != n.numInputs())
    return "body takes " + count(g->inputs().size(), "input") + " but the node has " + count(n.numInputs(), "input");
  if (g->outputs().size() != n.numOutputs())
    return "body gives " + count(g->outputs().size(), "output") + " but the node has " + count(n.numOutputs(), "output");
  return {};
}

}  // namespace

std::string controlFlowProblem(const Node& n) {
  if (!n.domain().empty() && n.domain() != "ai.onnx") return {};
  if (n.opType() == "If") return ifProblem(n);
  if (n.opType() == "Loop") return loopProblem(n);
  if (n.opType() == "Scan") return scanProblem(n);
  return {};
}

}  // namespace kiln
