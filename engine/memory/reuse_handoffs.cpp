#include "memory/reuse_handoffs.h"

#include <algorithm>
#include <map>
#include <unordered_set>

#include "ir/graph.h"
#include "memory/planned_offsets.h"
#include "schedule/happens_before.h"

namespace kiln::memory {

namespace {

// Per block, its last reader on each stream (the writer counts: it must be done too).
std::vector<std::map<int, int64_t>> lastReaders(const Lifetimes& life, const HappensBefore& hb) {
  std::vector<std::map<int, int64_t>> lastOn(life.blocks.size());
  for (const TensorLifetime& t : life.tensors) {
    if (t.kind != TensorKind::Arena || t.block < 0) continue;
    for (int64_t u : t.uses)
      if (u >= 0 && u < hb.steps()) {
        int64_t& last = lastOn[size_t(t.block)].try_emplace(hb.streamOf(u), u).first->second;
        last = std::max(last, u);
      }
  }
  return lastOn;
}

}  // namespace

std::vector<Buffer> streamOrderedBlocks(const Lifetimes& life, const HappensBefore& hb) {
  std::vector<Buffer> blocks = alignedBlocks(life);
  std::vector<std::vector<int64_t>> stepsOn(size_t(hb.streams()));
  for (int64_t s = 0; s < hb.steps(); ++s) stepsOn[size_t(hb.streamOf(s))].push_back(s);
  const std::vector<std::map<int, int64_t>> lastOn = lastReaders(life, hb);
  for (size_t b = 0; b < blocks.size(); ++b) {
    int64_t lastUse = -1;
    for (const auto& [stream, reader] : lastOn[b]) lastUse = std::max(lastUse, reader);
    if (lastUse < 0) continue;
    auto knowsAll = [&](int64_t step) {
      for (const auto& [stream, reader] : lastOn[b])
        if (!hb.knows(step, reader)) return false;
      return true;
    };
    for (const std::vector<int64_t>& steps : stepsOn) {
      // Knowledge only grows along a stream: the steps before the first that knows all readers run concurrently
      // with one of them, and the block stays taken until the last of those.
      auto from = std::upper_bound(steps.begin(), steps.end(), lastUse);
      auto first = std::partition_point(from, steps.end(), [&](int64_t step) { return !knowsAll(step); });
      if (first != from) blocks[b].upper = std::max(blocks[b].upper, *std::prev(first) + 1);
    }
  }
  return blocks;
}

void forEachUnorderedReuse(const Lifetimes& life, const std::vector<std::optional<int64_t>>& offsets,
                           HappensBefore& hb, const std::function<void(const UnorderedReuse&)>& unordered) {
  const std::vector<Buffer> aligned = alignedBlocks(life);
  const int64_t steps = hb.steps();
  const std::vector<std::map<int, int64_t>> lastOn = lastReaders(life, hb);
  std::vector<std::vector<int>> writtenAt(size_t(std::max<int64_t>(steps, 0)));
  for (size_t b = 0; b < aligned.size() && b < offsets.size(); ++b)
    if (offsets[b] && aligned[b].lower >= 0 && aligned[b].lower < steps)
      writtenAt[size_t(aligned[b].lower)].push_back(int(b));

  std::map<int64_t, std::pair<int64_t, int>> holder;  // disjoint byte ranges: start -> (end, latest block there)
  for (int64_t s = 0; s < steps; ++s) {
    hb.advance();
    for (int b : writtenAt[size_t(s)]) {
      const int64_t lo = *offsets[size_t(b)], hi = lo + aligned[size_t(b)].size;
      auto it = holder.upper_bound(lo);
      if (it != holder.begin() && std::prev(it)->second.first > lo) --it;
      std::vector<int> previous;
      for (auto scan = it; scan != holder.end() && scan->first < hi; ++scan)
        if (std::find(previous.begin(), previous.end(), scan->second.second) == previous.end())
          previous.push_back(scan->second.second);
      for (int a : previous) {
        if (aligned[size_t(a)].upper > s) continue;  // still live: an invalid plan, validatePlan's to report
        for (const auto& [stream, reader] : lastOn[size_t(a)])
          if (!hb.knows(s, reader)) unordered(UnorderedReuse{b, s, a, reader});
      }
      // b now holds [lo, hi): trim the ranges it cuts, drop the ones it covers.
      std::vector<std::pair<int64_t, std::pair<int64_t, int>>> keep;
      while (it != holder.end() && it->first < hi) {
        const auto [start, rest] = *it;
        if (start < lo) keep.push_back({start, {lo, rest.second}});
        if (rest.first > hi) keep.push_back({hi, rest});
        it = holder.erase(it);
      }
      for (const auto& k : keep) holder.insert(k);
      holder[lo] = {hi, b};
    }
  }
}

std::vector<Node*> stepNodes(const Graph& g, const Lifetimes& life) {
  const std::unordered_set<const Node*> isStep(life.order.begin(), life.order.end());
  std::vector<Node*> order;
  for (Node* n : g.nodes())
    if (isStep.count(n)) order.push_back(n);
  return order;
}

std::vector<UnorderedReuse> unorderedReuses(const Graph& g) {
  const Lifetimes life = computeLifetimes(g);
  HappensBefore hb(stepNodes(g, life));
  std::vector<UnorderedReuse> found;
  forEachUnorderedReuse(life, plannedBlockOffsets(life), hb, [&](const UnorderedReuse& r) { found.push_back(r); });
  return found;
}

}  // namespace kiln::memory
