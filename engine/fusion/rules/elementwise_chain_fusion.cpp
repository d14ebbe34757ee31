// ElementwiseChainFusion (UB fusion): a maximal tree of at least two adjacent element-wise ONNX ops on the Vector
// unit becomes one kiln:FusedElementwise kernel; its intermediates stay in the Unified Buffer instead of each being
// written to HBM and read back. Run by its own pass after engine placement ("UBFusion"), not by GraphFusion.
//
// The tree: every intermediate is read exactly once, by the tree; every value static in shape with a fixed-size
// element type; the result as large as the largest input (inputs may broadcast into it, but two inputs must not
// broadcast each other up into an outer product, which would make the kernel's output tiling differ from its
// inputs'). Anchored at the tree's sink: an op whose result is read once by another eligible op yields to it, so
// the sweep grows each tree from its last op and never fuses half a chain.
//
// Size caps, so the kernel fits one AI core:
//  - at most kMaxOps ops (a longer chain is cut; its upstream part stays unfused);
//  - the UB footprint. The kernel works on tiles of T = min(output elements, kTileElements) elements. Per tile,
//    every tensor of the chain is resident: each input and the output double-buffered (DMA of the next tile
//    overlaps the compute of this one), each intermediate once; an input smaller than a tile (a broadcast scalar
//    or row) takes its own size. bytes = Σ_inputs 2·min(T, n_i)·size_i + Σ_intermediates T·size + 2·T·size_out
//    must fit kUbBytes (256 KiB, the 910A's UB). kTileElements = 2048 is 16 repeats of the 128-lane Vector unit,
//    enough to hide a tile's DMA; a smaller tile would fit more ops but stall on every transfer.
// A producer whose addition would break a cap stays outside (its output becomes an input of the kernel).
//
// The fused node holds the tree as a graph attribute `body` (the original ops, inputs = the node's inputs in
// order, outputs = its outputs, no captures) for the emulator, and the op types in order as strings `ops`.
#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "ir/fused_node.h"
#include "fusion/match_helpers.h"
#include "fusion/rules/builtin_rules.h"
#include "ir/graph.h"
#include "ir/opdefs/op_registry.h"

namespace kiln {
namespace {

constexpr size_t kMaxOps = 32;
constexpr int64_t kUbBytes = 256 * 1024;
constexpr int64_t kTileElements = 2048;

// Plain ONNX element-wise math and activations (one output, inputs broadcast numpy-style).
const std::vector<std::string>& elementwiseOps() {
  static const std::vector<std::string> ops{
      "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Mod", "Relu", "Sigmoid", "Tanh", "Exp", "Log", "Sqrt",
      "Neg", "Abs", "Reciprocal", "Clip", "Erf", "LeakyRelu", "HardSigmoid", "HardSwish", "Elu", "Selu", "Celu",
      "Softplus", "Softsign", "Cast", "Floor", "Ceil", "Round", "Sign", "Sin", "Cos", "PRelu", "ThresholdedRelu",
      "Gelu", "Mish"};
  return ops;
}

bool isElementwiseOp(const std::string& op) {
  const auto& ops = elementwiseOps();
  return std::find(ops.begin(), ops.end(), op) != ops.end();
}

// Static shape and a fixed-size, numeric element type: the kernel knows every tensor's bytes.
std::optional<int64_t> elements(const Value* v) {
  if (!v || !v->type().isTensor() || v->type().dtype == DType::String || dtypeSize(v->type().dtype) <= 0)
    return std::nullopt;
  return v->type().shape.numel();
}

bool eligible(const Node& n) {
  if (!n.domain().empty() || !isElementwiseOp(n.opType()) || n.numOutputs() != 1 || !n.subgraphs().empty())
    return false;
  if (!elements(n.output(0))) return false;
  for (const Value* in : n.inputs())
    if (in && !elements(in)) return false;
  return true;
}

// The producer of `v` when the tree can take it in: an eligible op of the same graph whose output only it reads.
Node* absorbable(const Value* v, const Graph& g) {
  Node* p = v ? v->producer() : nullptr;
  return p && p->graph() == &g && hasSingleUse(v) && eligible(*p) ? p : nullptr;
}

struct Tree {
  std::vector<Node*> nodes;  // anchor first, then producers as they were taken in
  std::unordered_set<const Node*> members;

  // Values read by the tree but produced outside it, in first-read order (over `ordered` nodes).
  std::vector<Value*> inputs(const std::vector<Node*>& ordered) const {
    std::vector<Value*> in;
    for (const Node* n : ordered)
      for (Value* v : n->inputs())
        if (v && !(v->producer() && members.count(v->producer())) && std::find(in.begin(), in.end(), v) == in.end())
          in.push_back(v);
    return in;
  }

  int64_t ubBytes() const {
    const Value* out = nodes.front()->output(0);
    const int64_t tile = std::min(*elements(out), kTileElements);
    int64_t bytes = 2 * tile * dtypeSize(out->type().dtype);
    for (const Node* n : nodes)
      if (n != nodes.front()) bytes += tile * dtypeSize(n->output(0)->type().dtype);
    for (const Value* v : inputs(nodes)) bytes += 2 * std::min(tile, *elements(v)) * dtypeSize(v->type().dtype);
    return bytes;
  }
};

class ElementwiseChainFusion final : public FusionRule {
 public:
  std::string name() const override { return "ElementwiseChainFusion"; }
  std::vector<std::string> anchorTypes() const override { return elementwiseOps(); }

  Node* apply(Node& anchor, PassContext&) override {
    Graph& g = *anchor.graph();
    // Never inside a fused kernel's own body (the sweep visits subgraphs too).
    if (g.owner() && g.owner()->domain() == kKilnDomain) return nullptr;
    if (!eligible(anchor)) return nullptr;
    if (const Value* out = anchor.output(0); hasSingleUse(out) && eligible(*out->uses().front().node) &&
                                             out->uses().front().node->graph() == &g)
      return nullptr;  // not the sink: the consumer grows the tree over this op
    Tree t = grow(anchor, g);
    if (t.nodes.size() < 2) return nullptr;

    // Producers before consumers: every member was reached from its one consumer, so the reversed growth order is
    // a topological order of the tree (no walk over the whole graph per match).
    const std::vector<Node*> ordered(t.nodes.rbegin(), t.nodes.rend());
    // Result as large as the largest input: no outer-product broadcast.
    const std::vector<Value*> inputs = t.inputs(ordered);
    int64_t largest = 0;
    for (const Value* v : inputs) largest = std::max(largest, *elements(v));
    if (largest != *elements(anchor.output(0))) return nullptr;

    FusedNodeSpec spec;
    spec.opType = "FusedElementwise";
    spec.domain = std::string(kKilnDomain);
    spec.inputs = inputs;
    spec.outputs = {anchor.output(0)};
    std::vector<std::string> ops;
    for (const Node* n : ordered) ops.push_back(n->opType());
    spec.attrs = {{"body", Attribute(buildBody(g, ordered, inputs, anchor))}, {"ops", Attribute(ops)}};
    return fuseNodes(ordered, spec, name());
  }

 private:
  // Breadth first from the sink over single-use eligible producers, within the op count and UB caps.
  static Tree grow(Node& anchor, const Graph& g) {
    Tree t;
    t.nodes.push_back(&anchor);
    t.members.insert(&anchor);
    for (size_t i = 0; i < t.nodes.size() && t.nodes.size() < kMaxOps; ++i)
      for (Value* v : t.nodes[i]->inputs()) {
        Node* p = absorbable(v, g);
        if (!p || t.members.count(p) || t.nodes.size() >= kMaxOps) continue;
        t.nodes.push_back(p);
        t.members.insert(p);
        if (t.ubBytes() > kUbBytes) {
          t.nodes.pop_back();
          t.members.erase(p);
        }
      }
    return t;
  }

  // The tree as a self-contained graph: copies of its ops over fresh inputs, named under the sink so no name
  // shadows one of the enclosing graph.
  static Attribute::GraphPtr buildBody(Graph& g, const std::vector<Node*>& ordered, const std::vector<Value*>& inputs,
                                       const Node& sink) {
    const std::string prefix = sink.output(0)->name() + "/ub/";
    auto body = g.makeSubgraph(sink.name().empty() ? prefix + "body" : sink.name() + "/ub_body");
    std::unordered_map<const Value*, Value*> inside;
    for (const Value* v : inputs) inside[v] = body->addInput(prefix + v->name(), v->type());
    for (const Node* n : ordered) {
      std::vector<Value*> in;
      for (const Value* v : n->inputs()) in.push_back(v ? inside.at(v) : nullptr);
      Node* copy = body->addNode(n->opType(), in, {prefix + n->output(0)->name()}, n->name());
      for (const auto& a : n->attributes()) copy->setAttr(a.name, a.value);
      copy->output(0)->setType(n->output(0)->type());
      inside[n->output(0)] = copy->output(0);
    }
    body->addOutput(inside.at(sink.output(0)));
    return body;
  }
};

}  // namespace

std::shared_ptr<FusionRule> makeElementwiseChainFusion() { return std::make_shared<ElementwiseChainFusion>(); }

}  // namespace kiln
