#include "emulator/reference_executor.h"
#include "emulator/constant_nodes.h"

#include <unordered_set>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <unordered_map>

#include "emulator/control_flow_data.h"
#include "emulator/conv_chains.h"
#include "emulator/stored_layout.h"
#include "ir/dtype.h"
#include "kernels/conv_followers.h"
#include "options/options.h"

namespace kiln {

namespace {

// Values visible while running one graph: its own, then those of the enclosing graphs (implicit captures).
class Scope {
 public:
  explicit Scope(const Scope* parent) : parent_(parent) {}
  const Tensor* find(const Value* v) const {
    for (const Scope* s = this; s; s = s->parent_) {
      auto it = s->values_.find(v);
      if (it != s->values_.end()) return &it->second;
    }
    return nullptr;
  }
  void set(const Value* v, Tensor t) { values_.insert_or_assign(v, std::move(t)); }
  void erase(const Value* v) { values_.erase(v); }

 private:
  const Scope* parent_;
  std::unordered_map<const Value*, Tensor> values_;  // node-based: pointers to tensors stay valid across inserts
};

std::string nodeLabel(const Node& n) {
  return "Op '" + (n.name().empty() ? n.qualifiedType() : n.name()) + "' (" + n.qualifiedType() + ")";
}

// A value given for a graph input must match the declared element type and every static extent; symbolic extents
// must agree wherever the same symbol appears.
void checkInput(const Value& v, const Tensor& t, std::map<std::string, int64_t>& symbols) {
  const ValueType& want = v.type();
  if (!want.isTensor()) return;
  auto mismatch = [&](const std::string& why) {
    throw std::runtime_error("input '" + v.name() + "': expected " + want.toString() + ", got " +
                             std::string(dtypeName(t.dtype())) + "[" + Shape::ofStatic(t.dims()).toString() + "]" +
                             (why.empty() ? "" : " (" + why + ")"));
  };
  if (want.dtype != DType::Undefined && want.dtype != t.dtype()) mismatch("element type");
  if (!want.shape.rankKnown()) return;
  if (want.shape.rank() != t.dims().size()) mismatch("rank");
  for (size_t i = 0; i < t.dims().size(); ++i) {
    const Dim& d = want.shape[i];
    if (d.isStatic() && d.value != t.dims()[i]) mismatch("dimension " + std::to_string(i));
    if (d.isSymbolic()) {
      auto [it, fresh] = symbols.emplace(d.symbol, t.dims()[i]);
      if (!fresh && it->second != t.dims()[i])
        mismatch("'" + d.symbol + "' is " + std::to_string(it->second) + " elsewhere");
    }
  }
}

}  // namespace

struct GraphRunPlan {
  struct Step {
    const Node* node = nullptr;
    bool needed = false;                    // something the graph gives depends on it
    const ConvChain* chain = nullptr;       // it heads a conv chain (in `chains`)
    std::vector<const Value*> dropAfter;    // its inputs nobody reads after it
  };
  const Graph* graph = nullptr;
  bool chainsAllowed = false;
  std::vector<Step> steps;
  std::unordered_map<const Node*, ConvChain> chains;
};

namespace {

// Step at which each of g's values is read for the last time (reads from inside subgraphs count for the owner).
std::unordered_map<const Value*, size_t> lastUses(const Graph& g, const std::vector<Node*>& order) {
  std::unordered_map<const Value*, size_t> last;
  for (size_t step = 0; step < order.size(); ++step) {
    const Node& n = *order[step];
    for (const Value* v : n.inputs())
      if (v) last[v] = step;
    for (const Graph* sub : n.subgraphs())
      sub->forEachGraph([&](const Graph& inner) {
        for (const Node* m : inner.nodes())
          for (const Value* v : m->inputs())
            if (v && v->graph() == &g) last[v] = step;
        for (const Value* v : inner.outputs())
          if (v && v->graph() == &g) last[v] = step;
      });
  }
  return last;
}

std::shared_ptr<GraphRunPlan> makePlan(const Graph& g, bool chainsAllowed) {
  const auto order = g.topologicalOrder();
  if (!order) throw std::runtime_error("graph '" + g.name() + "' has a cycle");
  auto plan = std::make_shared<GraphRunPlan>();
  plan->graph = &g;
  plan->chainsAllowed = chainsAllowed;
  if (chainsAllowed) plan->chains = planConvChains(g, *order);
  const auto lastUse = lastUses(g, *order);
  const std::unordered_set<const Node*> needed = nodesTheOutputsNeed(g);
  plan->steps.resize(order->size());
  for (size_t step = 0; step < order->size(); ++step) {
    const Node* n = (*order)[step];
    GraphRunPlan::Step& s = plan->steps[step];
    s.node = n;
    s.needed = needed.count(n) > 0;
    if (auto c = plan->chains.find(n); c != plan->chains.end()) s.chain = &c->second;
    // Tensors nobody reads any more are dropped, so a deep model needs its live set, not every activation.
    for (const Value* v : n->inputs())
      if (v && v->graph() == &g && !v->isGraphOutput() && !v->constant() &&
          std::find(s.dropAfter.begin(), s.dropAfter.end(), v) == s.dropAfter.end()) {
        auto it = lastUse.find(v);
        if (it != lastUse.end() && it->second == step) s.dropAfter.push_back(v);
      }
  }
  return plan;
}

class Run {
 public:
  explicit Run(const ExecutionOptions& options) : options_(options) {}

  // `stable`: g lives as long as the model (the top-level graph, a control-flow or fused node's body), so its plan is
  // kept for the next time it runs (a Loop's body every iteration); a function body is made afresh for each call.
  std::vector<Tensor> graph(const Graph& g, const std::vector<Tensor>& inputs, const Scope* outer, int depth,
                            bool stable = true) {
    if (inputs.size() > g.inputs().size())
      throw std::runtime_error("graph '" + g.name() + "' takes " + std::to_string(g.inputs().size()) +
                               " inputs, got " + std::to_string(inputs.size()));
    Scope scope(outer);
    for (const Value* v : g.values())
      if (v->constant()) scope.set(v, *v->constant());
    const ConstantNodes* ahead = depth == 0 ? options_.constants.get() : nullptr;
    if (ahead)
      for (const auto& [v, t] : ahead->values)
        if (v->graph() == &g) scope.set(v, t);
    for (size_t i = 0; i < g.inputs().size(); ++i) {
      const Value* v = g.inputs()[i];
      // An omitted input (an optional one of a function body) stays unset: reading it fails at the reader.
      if (i < inputs.size() && inputs[i].valid()) scope.set(v, inputs[i]);
    }
    // Conv chains run as one kernel call, except where a caller looks at every node's outputs (or supplies them).
    const bool chainsAllowed = depth > 0 || (!options_.afterNode && !options_.reuse);
    std::shared_ptr<const GraphRunPlan> plan;
    if (depth == 0 && options_.plan && options_.plan->graph == &g && options_.plan->chainsAllowed == chainsAllowed)
      plan = options_.plan;
    else if (auto kept = plans_.find(&g); stable && kept != plans_.end() && kept->second->chainsAllowed == chainsAllowed)
      plan = kept->second;
    else {
      plan = makePlan(g, chainsAllowed);
      if (stable) plans_[&g] = plan;
    }
    std::unordered_set<const Node*> ranInChain;
    const auto dropDeadInputs = [&](const Node&, size_t step) {
      for (const Value* v : plan->steps[step].dropAfter) scope.erase(v);
    };
    for (size_t step = 0; step < plan->steps.size(); ++step) {
      const Node& n = *plan->steps[step].node;
      if (!plan->steps[step].needed) continue;  // nothing the graph gives depends on it
      if (ranInChain.count(&n)) {
        dropDeadInputs(n, step);
        continue;
      }
      if (ahead && ahead->nodes.count(&n)) {  // computed before the run: its outputs are in scope already
        if (options_.afterNode) {
          std::vector<Tensor> out;
          for (const Value* v : n.outputs()) out.push_back(v && scope.find(v) ? *scope.find(v) : Tensor());
          options_.afterNode(n, out);
        }
        dropDeadInputs(n, step);
        continue;
      }
      std::vector<const Tensor*> in;
      in.reserve(n.numInputs());
      for (const Value* v : n.inputs()) {
        if (!v) {
          in.push_back(nullptr);
          continue;
        }
        const Tensor* t = scope.find(v);
        if (!t) throw std::runtime_error(nodeLabel(n) + ": input '" + v->name() + "' has no value");
        in.push_back(t);
      }
      if (const ConvChain* chain = plan->steps[step].chain) {
        for (const Node* early : chain->early) {  // operands of the followers, made ahead of their place
          if (ahead && ahead->nodes.count(early)) continue;  // made before the run
          std::vector<const Tensor*> earlyIn;
          for (const Value* v : early->inputs()) earlyIn.push_back(v ? scope.find(v) : nullptr);
          std::vector<Tensor> made;
          try {
            made = node(*early, earlyIn, scope, depth);
          } catch (const NotEmulatable&) {
            throw;
          } catch (const std::runtime_error& e) {
            throw NodeFailed(e.what(), early);
          }
          for (size_t i = 0; i < early->numOutputs() && i < made.size(); ++i)
            if (early->output(i) && made[i].valid()) scope.set(early->output(i), std::move(made[i]));
          ranInChain.insert(early);
        }
        // A follower whose operands turn out not to allow it (a residual Add of a whole tensor after Conv →
        // BatchNormalization, as in every ResNet block) ends the chain there: the Conv still takes the followers
        // before it, and the rest run as nodes of their own.
        const std::vector<const Node*>& all = chain->followers;
        std::optional<Tensor> y;
        size_t taken = all.size();
        for (; taken > 0 && !y; --taken) {
          try {
            y = runChain(n, in, std::vector<const Node*>(all.begin(), all.begin() + static_cast<ptrdiff_t>(taken)), scope);
          } catch (const std::runtime_error& e) {
            throw NodeFailed(e.what(), &n);
          }
          if (y) break;
        }
        if (y) {
          scope.set(all[taken - 1]->output(0), std::move(*y));
          ranInChain.insert(all.begin(), all.begin() + static_cast<ptrdiff_t>(taken));
          dropDeadInputs(n, step);
          continue;
        }
      }
      std::vector<Tensor> out;
      try {
        const std::vector<Tensor>* cached = depth == 0 && options_.reuse ? options_.reuse(n) : nullptr;
        out = cached ? *cached : node(n, in, scope, depth);
      } catch (const NotEmulatable&) {
        throw;
      } catch (NodeFailed& e) {  // from inside this node's body: the path grows outwards
        e.enclosedBy(&n);
        throw;
      } catch (const std::runtime_error& e) {
        throw NodeFailed(e.what(), &n);
      }
      if (depth == 0 && options_.afterNode) options_.afterNode(n, out);
      for (size_t i = 0; i < n.numOutputs(); ++i) {
        if (!n.output(i)) continue;
        if (i >= out.size() || !out[i].valid())
          throw std::runtime_error(nodeLabel(n) + ": output " + std::to_string(i) + " was not computed");
        scope.set(n.output(i), std::move(out[i]));
      }
      dropDeadInputs(n, step);
    }
    std::vector<Tensor> result;
    for (const Value* v : g.outputs()) {
      const Tensor* t = scope.find(v);
      if (!t) throw std::runtime_error("output '" + v->name() + "' of graph '" + g.name() + "' has no value");
      result.push_back(*t);
    }
    return result;
  }

  void checkInputs(const Graph& g, const std::vector<Tensor>& inputs) {
    std::map<std::string, int64_t> symbols;
    for (size_t i = 0; i < inputs.size() && i < g.inputs().size(); ++i)
      if (inputs[i].valid()) checkInput(*g.inputs()[i], inputs[i], symbols);
  }

  // One node outside any graph run (ReferenceExecutor::runNode): `scope` holds what its bodies capture.
  std::vector<Tensor> one(const Node& n, const std::vector<const Tensor*>& in, const Scope& scope) {
    return node(n, in, scope, 0);
  }

 private:
  // A Conv and its followers (emulator/conv_chains.h) as one kernel call; nullopt when their operands do not allow it.
  std::optional<Tensor> runChain(const Node& conv, const std::vector<const Tensor*>& in,
                                 const std::vector<const Node*>& chain, const Scope& scope) {
    std::vector<kernels::ConvFollower> followers;
    const Value* previous = conv.output(0);
    for (const Node* f : chain) {
      kernels::ConvFollower follower{f, {}, 0};
      for (size_t k = 0; k < f->numInputs(); ++k) {
        const Value* v = f->input(k);
        if (v == previous) {
          follower.chainInput = k;
          follower.inputs.push_back(nullptr);
          continue;
        }
        const Tensor* t = v ? scope.find(v) : nullptr;
        if (v && !t) return std::nullopt;
        follower.inputs.push_back(t);
      }
      followers.push_back(std::move(follower));
      previous = f->output(0);
    }
    return kernels::convolveWithFollowers(conv, in, followers, options_.kernel);
  }

  std::vector<Tensor> node(const Node& n, const std::vector<const Tensor*>& in, const Scope& scope, int depth) {
    if (n.domain().empty()) {
      if (n.opType() == "If") return ifNode(n, in, scope, depth);
      if (n.opType() == "Loop") return loopNode(n, in, scope, depth);
      if (n.opType() == "Scan") return scanNode(n, in, scope, depth);
    }
    if (const Graph* body = definingBody(n)) {
      // A fused chain runs op by op on the tensors as laid out (its values record the layouts; each op converts).
      if (depth >= options_.maxExpansionDepth)
        throw std::runtime_error(nodeLabel(n) + ": bodies nest deeper than " + std::to_string(options_.maxExpansionDepth));
      std::vector<Tensor> args;
      for (const Tensor* t : in) args.push_back(t ? *t : Tensor());
      return graph(*body, args, nullptr, depth + 1);
    }
    if (n.numOutputs() == 1) {  // a compiled graph's fused body: convolutions, per-channel ops, pools on the blocks
      std::optional<Tensor> y = convolveOnStoredBlocks(n, in, options_.kernel);
      if (!y) y = channelOpOnStoredBlocks(n, in, options_.kernel);
      if (!y) y = poolOnStoredBlocks(n, in, options_.kernel);
      if (y) return {std::move(*y)};
    }
    const KernelOperands operands(n, in, options_.kernel.maxOutputBytes);
    std::vector<Tensor> out = evaluateNode(n, operands.inputs(), options_.kernel);
    if (out.empty() && options_.functions) {
      if (depth >= options_.maxExpansionDepth)
        throw std::runtime_error(nodeLabel(n) + ": function bodies nest deeper than " +
                                 std::to_string(options_.maxExpansionDepth));
      if (std::shared_ptr<Graph> body = options_.functions(n, operands.inputs())) {
        std::vector<Tensor> args;
        for (const Tensor* t : operands.inputs()) args.push_back(t ? *t : Tensor());
        out = graph(*body, args, nullptr, depth + 1, false);
      }
    }
    if (!out.empty()) {
      operands.storeOutputs(out);
      return out;
    }
    std::string what = n.qualifiedType();
    if (hasKernel(n)) {
      what += " on";
      for (const Tensor* t : operands.inputs())
        if (t) what += " " + std::string(dtypeName(t->dtype()));
    }
    throw NotEmulatable(what);
  }

  const Graph& subgraph(const Node& n, const char* name) {
    const Attribute* a = n.attr(name);
    const Attribute::GraphPtr* g = a ? a->get<Attribute::GraphPtr>() : nullptr;
    if (!g || !*g) throw std::runtime_error(nodeLabel(n) + ": missing graph attribute '" + name + "'");
    return **g;
  }

  void expectOutputs(const Node& n, size_t have) {
    if (have != n.numOutputs())
      throw std::runtime_error(nodeLabel(n) + ": the body gives " + std::to_string(have) + " outputs, the node has " +
                               std::to_string(n.numOutputs()));
  }

  std::vector<Tensor> ifNode(const Node& n, const std::vector<const Tensor*>& in, const Scope& scope, int depth) {
    const bool cond = flowdata::scalarTruth(nodeLabel(n) + " condition", in.empty() ? nullptr : in[0]);
    std::vector<Tensor> out = graph(subgraph(n, cond ? "then_branch" : "else_branch"), {}, &scope, depth);
    expectOutputs(n, out.size());
    return out;
  }

  // Loop(M?, cond?, carried...): body(iter, cond, carried...) -> (cond, carried..., scan slices...).
  std::vector<Tensor> loopNode(const Node& n, const std::vector<const Tensor*>& in, const Scope& scope, int depth) {
    const Graph& body = subgraph(n, "body");
    const std::string label = nodeLabel(n);
    if (in.size() < 2) throw std::runtime_error(label + ": needs the trip count and condition slots");
    const size_t carriedCount = in.size() - 2;
    if (body.inputs().size() != carriedCount + 2 || body.outputs().size() < carriedCount + 1)
      throw std::runtime_error(label + ": body signature does not match the node's inputs");
    const size_t scanCount = body.outputs().size() - 1 - carriedCount;
    const int64_t trips = in[0] ? flowdata::scalarInt(label + " trip count", *in[0]) : INT64_MAX;
    bool cond = in[1] ? flowdata::scalarTruth(label + " condition", in[1]) : true;
    std::vector<Tensor> carried;
    for (size_t i = 0; i < carriedCount; ++i) {
      if (!in[2 + i]) throw std::runtime_error(label + ": loop-carried input " + std::to_string(i) + " is missing");
      carried.push_back(*in[2 + i]);
    }
    std::vector<std::vector<Tensor>> scans(scanCount);
    flowdata::StackBudget budget(label, options_.kernel.maxOutputBytes);
    for (int64_t i = 0; i < trips && cond; ++i) {
      if (i >= options_.maxLoopIterations)
        throw std::runtime_error(label + ": more than " + std::to_string(options_.maxLoopIterations) + " iterations");
      std::vector<Tensor> args{flowdata::int64Scalar(i), flowdata::boolScalar(cond)};
      args.insert(args.end(), carried.begin(), carried.end());
      std::vector<Tensor> out = graph(body, args, &scope, depth);
      cond = flowdata::scalarTruth(label + " body condition", &out[0]);
      for (size_t c = 0; c < carriedCount; ++c) carried[c] = std::move(out[1 + c]);
      for (size_t k = 0; k < scanCount; ++k) {
        budget.add(out[1 + carriedCount + k]);
        scans[k].push_back(std::move(out[1 + carriedCount + k]));
      }
    }
    std::vector<Tensor> result = std::move(carried);
    for (size_t k = 0; k < scanCount; ++k)
      result.push_back(flowdata::stack(label, scans[k], 0, body.outputs()[1 + carriedCount + k]->type()));
    expectOutputs(n, result.size());
    return result;
  }

  // Scan (opset 9+)(state..., scan inputs...): body(state..., slices...) -> (state..., output slices...).
  std::vector<Tensor> scanNode(const Node& n, const std::vector<const Tensor*>& in, const Scope& scope, int depth) {
    const std::string label = nodeLabel(n);
    if (options_.opset < 9) throw NotEmulatable("Scan (opset 8 batched form)");
    const Graph& body = subgraph(n, "body");
    const int64_t scanInputs = n.attrInt("num_scan_inputs", -1);
    if (scanInputs < 1 || static_cast<size_t>(scanInputs) > in.size())
      throw std::runtime_error(label + ": num_scan_inputs out of range");
    const size_t stateCount = in.size() - static_cast<size_t>(scanInputs);
    if (body.inputs().size() != in.size() || body.outputs().size() < stateCount)
      throw std::runtime_error(label + ": body signature does not match the node's inputs");
    const size_t scanOutputs = body.outputs().size() - stateCount;
    for (const Tensor* t : in)
      if (!t) throw std::runtime_error(label + ": inputs are not optional");
    const flowdata::ScanAxes axes(label, n, in, stateCount, scanOutputs);
    std::vector<Tensor> state;
    for (size_t i = 0; i < stateCount; ++i) state.push_back(*in[i]);
    std::vector<std::vector<Tensor>> slices(scanOutputs);
    flowdata::StackBudget budget(label, options_.kernel.maxOutputBytes);
    for (int64_t step = 0; step < axes.length; ++step) {
      std::vector<Tensor> args = state;
      for (size_t j = 0; j < static_cast<size_t>(scanInputs); ++j) {
        const int64_t at = axes.inputReversed[j] ? axes.length - 1 - step : step;
        args.push_back(flowdata::sliceAt(label, *in[stateCount + j], axes.inputAxis[j], at));
      }
      std::vector<Tensor> out = graph(body, args, &scope, depth);
      for (size_t i = 0; i < stateCount; ++i) state[i] = std::move(out[i]);
      for (size_t k = 0; k < scanOutputs; ++k) {
        budget.add(out[stateCount + k]);
        slices[k].push_back(std::move(out[stateCount + k]));
      }
    }
    std::vector<Tensor> result = std::move(state);
    for (size_t k = 0; k < scanOutputs; ++k) {
      if (axes.outputReversed[k]) std::reverse(slices[k].begin(), slices[k].end());
      result.push_back(flowdata::stack(label, slices[k], axes.outputAxis[k], body.outputs()[stateCount + k]->type()));
    }
    expectOutputs(n, result.size());
    return result;
  }

  const ExecutionOptions& options_;
  std::unordered_map<const Graph*, std::shared_ptr<const GraphRunPlan>> plans_;  // of the stable graphs run so far
};

}  // namespace

const Graph* definingBody(const Node& n) {
  if (n.domain() != "kiln") return nullptr;
  const Attribute* a = n.attr("body");
  const Attribute::GraphPtr* g = a ? a->get<Attribute::GraphPtr>() : nullptr;
  return g && *g ? g->get() : nullptr;
}

namespace {

bool isControlFlow(const Node& n) {
  return n.domain().empty() && (n.opType() == "If" || n.opType() == "Loop" || n.opType() == "Scan");
}

}  // namespace

ExecutionOptions withLimits(ExecutionOptions base, const Options& options) {
  base.maxArenaBytes = options.getInt(kEmulatorArenaKey);
  base.kernel.maxOutputBytes = options.getInt(kEmulatorTensorKey);
  return base;
}

ReferenceExecutor::ReferenceExecutor(ExecutionOptions options) : options_(std::move(options)) {
  if (options_.kernel.opset == 0) options_.kernel.opset = options_.opset;
}

std::shared_ptr<const GraphRunPlan> planGraphRun(const Graph& g, const ExecutionOptions& options) {
  return makePlan(g, !options.afterNode && !options.reuse);
}

std::vector<Tensor> ReferenceExecutor::run(const Graph& g, const std::vector<Tensor>& inputs) const {
  Run run(options_);
  if (options_.checkInputTypes) run.checkInputs(g, inputs);
  return run.graph(g, inputs, nullptr, 0);
}

std::unordered_set<const Node*> nodesTheOutputsNeed(const Graph& g) {
  std::unordered_set<const Node*> needed;
  std::vector<const Node*> work;
  for (const Value* v : g.outputs())
    if (v && v->producer() && v->producer()->graph() == &g && needed.insert(v->producer()).second)
      work.push_back(v->producer());
  while (!work.empty()) {
    const Node* n = work.back();
    work.pop_back();
    for (const Node* p : g.predecessorsOf(*n))
      if (needed.insert(p).second) work.push_back(p);
  }
  return needed;
}

bool outputsNeed(const Value& input, const std::unordered_set<const Node*>& needed) {
  if (input.isGraphOutput()) return true;
  for (const Use& u : input.uses()) {
    const Node* n = u.node;
    while (n && n->graph() != input.graph()) n = n->graph()->owner();  // a use inside a body counts for its holder
    if (n && needed.count(n)) return true;
  }
  return false;
}

std::vector<Tensor> ReferenceExecutor::runNode(const Node& n, const std::vector<const Tensor*>& in,
                                               const std::function<const Tensor*(const Value*)>& outer) const {
  // The node's bodies see the values they capture from outside it through a scope holding just those.
  Scope captured(nullptr);
  std::unordered_set<const Graph*> inside;
  for (const Graph* body : n.subgraphs()) body->forEachGraph([&](const Graph& g) { inside.insert(&g); });
  auto capture = [&](const Value* v) {
    if (v && !inside.count(v->graph()) && !captured.find(v))
      if (const Tensor* t = outer(v)) captured.set(v, *t);
  };
  for (const Graph* g : inside) {
    for (const Node* m : g->nodes())
      for (const Value* v : m->inputs()) capture(v);
    for (const Value* v : g->outputs()) capture(v);  // a branch may give an outer value as it is
  }
  Run run(options_);
  try {
    return run.one(n, in, captured);
  } catch (const NotEmulatable&) {
    throw;
  } catch (NodeFailed& e) {
    e.enclosedBy(&n);
    throw;
  } catch (const std::runtime_error& e) {
    throw NodeFailed(e.what(), &n);
  }
}

std::string firstUnsupportedOp(const Graph& g, const FunctionExpander& functions) {
  std::string missing;
  g.forEachGraph([&](const Graph& sub) {
    for (const Node* n : sub.nodes()) {
      if (!missing.empty()) return;
      if (isControlFlow(*n) || hasKernel(*n) || definingBody(*n)) continue;
      if (functions && functions(*n, {})) continue;
      missing = n->qualifiedType();
    }
  });
  return missing;
}

}  // namespace kiln
