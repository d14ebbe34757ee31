#include "emulator/conv_chains.h"

#include <unordered_set>

#include "ir/format.h"
#include "kernels/conv_followers.h"

namespace kiln {
namespace {

bool blocked(const Value* v) { return v && isBlockedFormat(v->type().format); }

bool touchesBlockedLayout(const Node& n) {
  for (const Value* v : n.inputs())
    if (blocked(v)) return true;
  for (const Value* v : n.outputs())
    if (blocked(v)) return true;
  return false;
}

}  // namespace

std::unordered_map<const Node*, ConvChain> planConvChains(const Graph& g, const std::vector<Node*>& order) {
  // Every read of each of g's values: (reader, slot), counting reads from inside subgraphs for their owner.
  struct Reads {
    const Node* reader = nullptr;
    size_t slot = 0;
    int count = 0;
  };
  std::unordered_map<const Value*, Reads> reads;
  std::unordered_map<const Node*, size_t> step;
  for (size_t i = 0; i < order.size(); ++i) {
    const Node& n = *order[i];
    step[&n] = i;
    for (size_t k = 0; k < n.numInputs(); ++k)
      if (const Value* v = n.input(k)) reads[v] = {&n, k, reads[v].count + 1};
    for (const Graph* sub : n.subgraphs())
      sub->forEachGraph([&](const Graph& inner) {
        for (const Node* m : inner.nodes())
          for (const Value* v : m->inputs())
            if (v && v->graph() == &g) reads[v].count += 2;  // never a chain link
        for (const Value* v : inner.outputs())
          if (v && v->graph() == &g) reads[v].count += 2;
      });
  }
  // An operand exists before the Conv at step `at` runs.
  const auto ready = [&](const Value* v, size_t at) {
    if (!v || v->constant() || v->graph() != &g || !v->producer()) return true;
    auto it = step.find(v->producer());
    return it != step.end() && it->second < at;
  };
  // A node that can run before the Conv at step `at` instead of at its place: a plain op of g whose operands all
  // exist by then.
  const auto hoistable = [&](const Node* p, size_t at) {
    if (!p || p->graph() != &g || p->hasSubgraphs() || touchesBlockedLayout(*p)) return false;
    for (const Value* in : p->inputs())
      if (!ready(in, at)) return false;
    return true;
  };
  std::unordered_map<const Node*, ConvChain> chains;
  std::unordered_set<const Node*> hoisted;  // each at most once
  for (size_t i = 0; i < order.size(); ++i) {
    const Node& conv = *order[i];
    if (!conv.domain().empty() || conv.opType() != "Conv" || conv.numOutputs() != 1 || touchesBlockedLayout(conv))
      continue;
    ConvChain chain;
    const Value* v = conv.output(0);
    while (v && !v->isGraphOutput()) {
      auto r = reads.find(v);
      if (r == reads.end() || r->second.count != 1) break;
      const Node& next = *r->second.reader;
      if (!kernels::canFollowConv(next, r->second.slot) || touchesBlockedLayout(next)) break;
      std::vector<const Node*> early;
      bool operandsReady = true;
      for (size_t k = 0; k < next.numInputs() && operandsReady; ++k) {
        const Value* operand = next.input(k);
        if (k == r->second.slot || ready(operand, i)) continue;
        const Node* p = operand->producer();
        operandsReady = hoistable(p, i) && !hoisted.count(p);
        if (operandsReady) early.push_back(p);
      }
      if (!operandsReady) break;
      chain.followers.push_back(&next);
      for (const Node* p : early)
        if (hoisted.insert(p).second) chain.early.push_back(p);
      v = next.output(0);
    }
    if (!chain.followers.empty()) chains.emplace(&conv, std::move(chain));
  }
  return chains;
}

}  // namespace kiln
