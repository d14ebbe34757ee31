#include "emulator/constant_nodes.h"

#include <chrono>
#include <exception>

#include "emulator/reference_executor.h"
#include "ir/graph.h"

namespace kiln {
namespace {

// Ops whose outputs may differ from run to run on the same inputs (Dropout: in training mode). Ops of other domains
// (a model's local functions, whose bodies may hold any of these) are left to the run too.
bool mayVary(const Node& n) {
  static const std::unordered_set<std::string> ops = {"RandomNormal", "RandomUniform", "RandomNormalLike",
                                                      "RandomUniformLike", "Multinomial", "Bernoulli", "Dropout"};
  return n.domain().empty() ? ops.count(n.opType()) > 0 : n.domain() != "kiln";
}

}  // namespace

std::shared_ptr<const ConstantNodes> computeConstantNodes(const Graph& g, const ReferenceExecutor& exec) {
  const auto start = std::chrono::steady_clock::now();
  auto result = std::make_shared<ConstantNodes>();
  const auto order = g.topologicalOrder();
  if (!order) return result;  // the run reports the cycle
  for (const Node* n : *order) {
    if (n->hasSubgraphs() || mayVary(*n)) continue;
    std::vector<const Tensor*> in;
    bool constant = true;
    for (const Value* v : n->inputs()) {
      if (!v) {
        in.push_back(nullptr);
        continue;
      }
      auto it = result->values.find(v);
      if (it != result->values.end()) {
        in.push_back(&it->second);
      } else if (v->constant()) {
        in.push_back(v->constant());
      } else {
        constant = false;
        break;
      }
    }
    if (!constant) continue;
    std::vector<Tensor> out;
    try {
      out = exec.runNode(*n, in, [](const Value*) -> const Tensor* { return nullptr; });
    } catch (const std::exception&) {
      continue;  // left to the run, which names the node and the problem
    }
    bool complete = out.size() >= n->numOutputs();
    for (size_t i = 0; complete && i < n->numOutputs(); ++i) complete = !n->output(i) || out[i].valid();
    if (!complete) continue;
    for (size_t i = 0; i < n->numOutputs(); ++i)
      if (const Value* v = n->output(i)) result->values.emplace(v, std::move(out[i]));
    result->nodes.insert(n);
  }
  result->ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace kiln
