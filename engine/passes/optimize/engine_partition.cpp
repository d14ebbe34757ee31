// EnginePartition: splits the graph into engine subgraphs — maximal groups of connected nodes on one engine — as GE
// does before it hands each subgraph to its engine's optimiser and task builder. A node joins a producer's group
// of the same engine unless that would close a cycle between groups (a path leaving the group and coming back
// through another engine), so the groups always form a DAG that can be launched in order.
// Host nodes (shape bookkeeping such as Reshape, no device task) belong to no engine's work: they join the group of
// a producer whatever its engine, so a Reshape between two matrix products does not cut a subgraph in two.
// Result: annotation "partition" = "ENGINE#k" (k numbers the groups of one engine in graph order). Counters:
// partitions in total and per engine.
#include <algorithm>
#include <map>
#include <stdexcept>

#include "ir/graph.h"
#include "ir/model.h"
#include "passes/optimize/schedule_passes.h"
#include "util/flat_ptr_map.h"

namespace kiln {
namespace {

// Past this many groups the ancestor sets (groups² bits) would grow too large; further nodes start groups of
// their own without merging, which stays correct (no cycles) and only partitions more finely.
constexpr size_t kMaxTrackedGroups = 8192;

class Bits {
 public:
  bool test(size_t i) const { return i / 64 < w_.size() && (w_[i / 64] >> (i % 64)) & 1; }
  void set(size_t i) {
    if (i / 64 >= w_.size()) w_.resize(i / 64 + 1, 0);
    w_[i / 64] |= uint64_t{1} << (i % 64);
  }
  void reset(size_t i) {
    if (i / 64 < w_.size()) w_[i / 64] &= ~(uint64_t{1} << (i % 64));
  }
  // this |= o; true when a bit was added.
  bool merge(const Bits& o) {
    if (o.w_.size() > w_.size()) w_.resize(o.w_.size(), 0);
    bool added = false;
    for (size_t k = 0; k < o.w_.size(); ++k) {
      added = added || (o.w_[k] & ~w_[k]) != 0;
      w_[k] |= o.w_[k];
    }
    return added;
  }

 private:
  std::vector<uint64_t> w_;
};

struct Group {
  std::string engine;
  size_t members = 0;
  Bits ancestors;  // groups with a path into this one (transitively closed)
};

class EnginePartition final : public Pass {
 public:
  std::string name() const override { return "EnginePartition"; }

  PassResult run(PassContext& ctx) override {
    Graph& g = *ctx.model.graph;
    const auto order = g.topologicalOrder();
    if (!order) throw std::runtime_error("the graph has a cycle");
    std::vector<Group> groups;
    FlatPtrMap<const Node*, size_t> groupOf;
    for (Node* n : *order) {
      const std::string engine = n->annotation("engine");
      std::vector<size_t> inputs;  // groups of the producers
      for (Node* p : g.predecessorsOf(*n)) inputs.push_back(groupOf.at(p));
      std::sort(inputs.begin(), inputs.end());
      inputs.erase(std::unique(inputs.begin(), inputs.end()), inputs.end());
      Bits above;  // every group with a path into n
      for (size_t in : inputs) {
        above.set(in);
        above.merge(groups[in].ancestors);
      }
      const size_t joined = groups.size() <= kMaxTrackedGroups ? joinable(groups, inputs, engine) : SIZE_MAX;
      if (joined == SIZE_MAX) {
        groups.push_back({engine, 1, std::move(above)});
        groupOf[n] = groups.size() - 1;
        continue;
      }
      groupOf[n] = joined;
      ++groups[joined].members;
      // The group now also depends on n's other producers, and so does everything below it.
      Bits extra = std::move(above);
      extra.reset(joined);
      if (groups[joined].ancestors.merge(extra))
        for (Group& d : groups)
          if (d.ancestors.test(joined)) d.ancestors.merge(extra);
    }
    return annotate(g, groups, groupOf);
  }

 private:
  // A producer group of the same engine (any engine, for a host node) n can join: none of n's other producer groups
  // may lie below it.
  static size_t joinable(const std::vector<Group>& groups, const std::vector<size_t>& inputs, const std::string& e) {
    size_t best = SIZE_MAX;
    for (size_t c : inputs) {
      if (groups[c].engine != e && e != "host") continue;
      bool cycle = false;
      for (size_t other : inputs) cycle = cycle || (other != c && groups[other].ancestors.test(c));
      if (!cycle && (best == SIZE_MAX || groups[c].members > groups[best].members)) best = c;
    }
    return best;
  }

  static PassResult annotate(Graph& g, const std::vector<Group>& groups,
                             const FlatPtrMap<const Node*, size_t>& groupOf) {
    PassResult r;
    // Number the groups of each engine in graph order of their first node.
    std::map<std::string, int> nextOfEngine;
    std::vector<int> label(groups.size(), -1);
    for (Node* n : g.nodes()) {
      const size_t gi = groupOf.at(n);
      if (label[gi] < 0) {
        label[gi] = nextOfEngine[groups[gi].engine]++;
        r.add("partitions");
        r.add(groups[gi].engine + "_partitions");
      }
      const std::string name = groups[gi].engine + "#" + std::to_string(label[gi]);
      if (n->annotation("partition") != name) {
        n->setAnnotation("partition", name);
        r.changed = true;
      }
    }
    return r;
  }
};

}  // namespace

std::unique_ptr<Pass> makeEnginePartitionPass() { return std::make_unique<EnginePartition>(); }

}  // namespace kiln
