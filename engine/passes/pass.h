#pragma once
// A compiler pass: a small object with a name that transforms a Model. Passes never know they are observed
// (timing, history, dumps are PassObservers, see pass_manager.h). A NodePass visits nodes and is run to a fixpoint.
#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

struct Model;
class Node;
class Graph;
class Options;

enum class Stage { Prepare, Optimize, Compile };
std::string_view stageName(Stage s);  // "prepare", "optimize", "compile"

struct PassResult {
  bool changed = false;
  std::map<std::string, int64_t> counters;  // e.g. {"folded": 412}; stored with the pass in the history
  void add(const std::string& counter, int64_t n = 1) {
    counters[counter] += n;
    if (n) changed = true;
  }
};

// What a pass sees besides the model.
struct PassContext {
  Model& model;
  const Options& options;
  std::vector<std::string>& warnings;  // diagnostics worth showing the user (unsupported ops, skipped folds...)
};

// Thrown by a pass that finds the model itself invalid (an If without its else_branch...): bad input, which the
// commands report with exit 2, rather than a pass that could not do its job.
struct InvalidModelError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Pass {
 public:
  virtual ~Pass() = default;
  virtual std::string name() const = 0;
  // Throws std::runtime_error (with the reason) when it cannot do its job; the run then fails at this pass.
  virtual PassResult run(PassContext& ctx) = 0;
};

// Collects the nodes a NodePass touched so the driver can revisit their neighbours.
class NodeWorklist {
 public:
  // Call for every node created or changed; its producers and consumers are revisited too.
  void touched(Node* n) { touched_.push_back(n); }
  const std::vector<Node*>& touchedNodes() const { return touched_; }
  void clear() { touched_.clear(); }

 private:
  std::vector<Node*> touched_;
};

// Visits every node of every graph (subgraphs included) until nothing changes: a node whose neighbour changed is
// visited again. `visit` may erase the node it is given (then it must not touch it afterwards).
class NodePass : public Pass {
 public:
  PassResult run(PassContext& ctx) final;

 protected:
  // Returns true when it changed something; reports created/changed nodes to `work`.
  virtual bool visit(Node& node, PassContext& ctx, NodeWorklist& work, PassResult& result) = 0;
  // Called once before the first visit (e.g. to build tables).
  virtual void begin(PassContext&) {}
  // Safety net against rewrite loops that never settle: visits per node before giving up.
  virtual int maxVisitsPerNode() const { return 16; }
};

}  // namespace kiln
