#include "memory/lifetimes.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <numeric>
#include <unordered_map>

#include "ir/graph.h"

namespace kiln::memory {
namespace {

std::optional<int64_t> staticBytes(const Value& v) {
  const auto numel = v.type().shape.numel();
  if (!numel || dtypeSize(v.type().dtype) <= 0) return std::nullopt;
  const int64_t bytes = storageBytes(v.type().dtype, *numel);  // int4 weights take half a byte each
  if (bytes < 0 || bytes > (int64_t{1} << 56)) return std::nullopt;
  return bytes;
}

bool isWeight(const Value& v) {
  if (v.constant()) return true;
  const Node* p = v.producer();
  // ONNX's Constant, and GE's Const in a compiled .om (whose bytes live in the weight memory).
  return p && ((p->opType() == "Constant" && p->domain().empty()) || (p->opType() == "Const" && p->domain() == "ge"));
}

// A compiled .om spells the graph's inputs and outputs as ops: what GE's Data produces is a graph input, what its
// NetOutput takes is a graph output (both zero-copy: the caller's buffers).
bool isGeDataOutput(const Value& v) {
  const Node* p = v.producer();
  return p && p->opType() == "Data" && p->domain() == "ge";
}

bool feedsGeNetOutput(const Value& v) {
  for (const Use& u : v.uses())
    if (u.node->opType() == "NetOutput" && u.node->domain() == "ge") return true;
  return false;
}

}  // namespace

int64_t geTensorBytes(int64_t bytes) { return (bytes + 31) / 32 * 32 + 32; }

std::string_view tensorKindName(TensorKind k) {
  switch (k) {
    case TensorKind::Arena: return "arena";
    case TensorKind::GraphInput: return "input";
    case TensorKind::GraphOutput: return "output";
    case TensorKind::Weight: return "weight";
    case TensorKind::Unsized: return "unsized";
  }
  return "?";
}

const TensorLifetime* Lifetimes::find(const Value* v) const {
  auto it = indexOf.find(v);
  return it == indexOf.end() ? nullptr : &tensors[it->second];
}

namespace {
// An .om's Const and Data ops compute nothing and get no task (their outputs are the weights and the caller's
// inputs): they are not steps, so an .om's plan is drawn over the ops that run, as a compile of ours is.
bool isStep(const Node& n) {
  return n.domain() != "ge" || (n.opType() != "Const" && n.opType() != "Constant" && n.opType() != "Data");
}
}  // namespace

Lifetimes computeLifetimes(const Graph& g) {
  Lifetimes out;
  std::vector<Node*> order;
  for (Node* n : g.nodes())
    if (isStep(*n)) order.push_back(n);
  out.order.assign(order.begin(), order.end());
  FlatPtrMap<const Node*, int64_t> stepOf;
  for (size_t i = 0; i < order.size(); ++i) stepOf[order[i]] = int64_t(i);

  // The step of the main-graph node a use belongs to (a use inside a subgraph counts for the node owning it).
  auto useStep = [&](const Node* n) -> int64_t {
    while (n && n->graph() != &g) n = n->graph()->owner();
    auto it = n ? stepOf.find(n) : stepOf.end();
    return it == stepOf.end() ? -1 : it->second;
  };

  auto& index = out.indexOf;
  std::vector<const Value*> aliasOf;               // per tensor: the tensor whose block it shares (itself if none)
  auto add = [&](const Value* v) {
    if (!v || index.count(v)) return;
    TensorLifetime t;
    t.value = v;
    const auto bytes = staticBytes(*v);
    t.bytes = bytes ? geTensorBytes(*bytes) : 0;
    if (v->isGraphInput() || isGeDataOutput(*v)) t.kind = TensorKind::GraphInput;
    else if (isWeight(*v)) t.kind = TensorKind::Weight;
    else if (v->isGraphOutput() || feedsGeNetOutput(*v)) t.kind = TensorKind::GraphOutput;
    else if (!bytes) t.kind = TensorKind::Unsized;
    t.first = v->producer() ? useStep(v->producer()) : -1;
    t.uses.push_back(std::max<int64_t>(t.first, 0));
    for (const Use& u : v->uses())
      if (int64_t s = useStep(u.node); s >= 0) t.uses.push_back(s);
    std::sort(t.uses.begin(), t.uses.end());
    t.uses.erase(std::unique(t.uses.begin(), t.uses.end()), t.uses.end());
    t.end = t.uses.back() + 1;
    index[v] = out.tensors.size();
    out.tensors.push_back(t);
    aliasOf.push_back(v);
  };
  for (Node* n : order) {
    for (const Value* v : n->inputs()) add(v);
    for (const Value* v : n->outputs()) add(v);
    if (aliasesInput(*n)) {
      const size_t in = index.at(n->input(0)), o = index.at(n->output(0));
      if (out.tensors[in].kind == TensorKind::Arena && out.tensors[o].kind == TensorKind::Arena)
        aliasOf[o] = aliasOf[in];
    }
  }
  for (const Value* v : g.outputs()) add(v);

  // Blocks: one per alias root, covering every member's lifetime.
  FlatPtrMap<const Value*, int> blockOf;
  for (size_t i = 0; i < out.tensors.size(); ++i) {
    TensorLifetime& t = out.tensors[i];
    switch (t.kind) {
      case TensorKind::Weight: out.weightBytes += t.bytes; continue;
      case TensorKind::GraphInput:
      case TensorKind::GraphOutput: out.ioBytes += t.bytes; continue;
      case TensorKind::Unsized:
        ++out.unsized;
        if (t.value->type().shape.rankKnown())
          for (const Dim& d : t.value->type().shape.dims())
            if (d.isSymbolic()) out.unsizedSymbols.push_back(d.symbol);
        continue;
      case TensorKind::Arena: break;
    }
    const Value* root = aliasOf[i];
    auto [it, fresh] = blockOf.emplace(root, int(out.blocks.size()));
    if (fresh) out.blocks.push_back(Buffer{int64_t(out.blocks.size()), t.first, t.end, t.bytes});
    Buffer& b = out.blocks[size_t(it->second)];
    b.lower = std::min(b.lower, t.first);
    b.upper = std::max(b.upper, t.end);
    b.size = std::max(b.size, t.bytes);
    t.block = it->second;
  }
  for (const Buffer& b : out.blocks) out.noReuseBytes += b.size;
  std::sort(out.unsizedSymbols.begin(), out.unsizedSymbols.end());
  out.unsizedSymbols.erase(std::unique(out.unsizedSymbols.begin(), out.unsizedSymbols.end()), out.unsizedSymbols.end());
  return out;
}

std::vector<Buffer> alignedBlocks(const Lifetimes& life) {
  std::vector<Buffer> blocks = life.blocks;
  for (Buffer& b : blocks) b.size = (b.size + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
  return blocks;
}

}  // namespace kiln::memory
