#include "emulator/pass_verifier.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "emulator/arena_executor.h"
#include "emulator/precision_gate.h"
#include "emulator/tensor_compare.h"
#include "emulator/function_expander.h"

namespace kiln {

namespace {

bool hasMemoryPlan(const Graph& g) {
  for (const Node* n : g.nodes())
    if (n->annotations().count("mem.out")) return true;
  return false;
}

// The previous run's outputs are kept for the next pass up to this many bytes (they share storage with what the
// run computed: the cost is keeping every intermediate alive between two runs). Past it, passes run in full.
constexpr int64_t kMaxCacheBytes = int64_t{1} << 30;

double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

ExecutionOptions PassVerifier::reusingOptions(const Model& model, PassAccuracy& stats) {
  ExecutionOptions options = limits_;
  options.opset = model.opsetFor("");
  options.functions = makeFunctionExpander(model);
  next_.clear();
  nextBytes_ = 0;
  reusedValues_.clear();
  const uint64_t since = cacheRevision_;
  const bool usable = cacheUsable_;
  // A value the previous run computed or was given, unchanged since: produced by a node this run reuses, or an
  // input or constant whose own fields did not change.
  auto unchanged = [this, since](const Value* v) {
    if (!v) return true;
    if (v->producer()) return reusedValues_.count(static_cast<uint64_t>(v->id())) > 0;
    return v->revision() <= since;
  };
  options.reuse = [this, since, usable, unchanged, &stats](const Node& n) -> const std::vector<Tensor>* {
    bool ok = usable && n.definitionRevision() <= since && n.subgraphs().empty();
    for (const Value* v : n.inputs()) ok = ok && unchanged(v);
    reused_.clear();
    for (const Value* v : n.outputs()) {
      if (!ok) break;
      auto it = v ? cache_.find(static_cast<uint64_t>(v->id())) : cache_.end();
      if (v && (it == cache_.end() || v->revision() > since)) ok = false;
      else reused_.push_back(v ? it->second : Tensor());
    }
    if (!ok) {
      ++stats.nodesRun;
      return nullptr;
    }
    ++stats.nodesReused;
    for (const Value* v : n.outputs())
      if (v) reusedValues_.insert(static_cast<uint64_t>(v->id()));
    return &reused_;
  };
  options.afterNode = [this](const Node& n, const std::vector<Tensor>& out) {
    for (size_t i = 0; i < out.size() && i < n.numOutputs(); ++i) {
      if (!n.output(i) || !out[i].valid() || nextBytes_ > kMaxCacheBytes) continue;
      nextBytes_ += static_cast<int64_t>(out[i].byteSize());
      next_[static_cast<uint64_t>(n.output(i)->id())] = out[i];
    }
  };
  return options;
}



PassVerifier::PassVerifier(std::vector<Tensor> inputs, std::optional<double> rtol,
                           std::function<void(const PassAccuracyRow&)> sink)
    : inputs_(std::move(inputs)), rtol_(rtol), sink_(std::move(sink)) {}

void PassVerifier::add(PassAccuracy a) {
  if (sink_) sink_(a.row);
  results_.push_back(std::move(a));
}

void PassVerifier::runStarted(const Model& model, const Options& opts) {
  limits_ = withLimits({}, opts);
  options_ = opts;
  const Graph& g = *model.graph;
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const Value* v = g.inputs()[i];
    Tensor t = i < inputs_.size() && inputs_[i].valid() ? inputs_[i] : v->constant() ? *v->constant() : Tensor();
    namedInputs_.emplace_back(v->name(), std::move(t));
  }
  for (const Value* v : g.outputs()) outputNames_.push_back(v->name());
  PassAccuracy a;
  a.pass = "import";
  a.row.seq = 0;
  try {
    const auto start = std::chrono::steady_clock::now();
    ExecutionOptions options = reusingOptions(model, a);
    baseline_ = ReferenceExecutor(options).run(g, inputs_);
    a.ms = msSince(start);
    keepRun(model);
    a.row.maxAbs = a.row.maxRel = 0.0;
    a.row.cosine = 1.0;
  } catch (const NotEmulatable& e) {
    baselineError_ = e.what();
    a.row.status = "not_emulatable";
    a.row.detail = e.what();
  } catch (const std::exception& e) {
    baselineError_ = e.what();
    a.row.status = "error";
    a.row.detail = e.what();
  }
  add(std::move(a));
}

void PassVerifier::afterPass(const PassRecord& record, const Model& model) {
  PassAccuracy a;
  a.pass = record.name;
  if (!record.changed && !results_.empty()) {
    a.row = results_.back().row;  // same graph, same numbers
  } else if (!baselineError_.empty()) {
    a.row.status = results_.front().row.status;
    a.row.detail = "the original graph does not run: " + baselineError_;
  } else {
    const auto start = std::chrono::steady_clock::now();
    a.row = verify(model, record.index, a);
    a.ms = msSince(start);
  }
  a.row.seq = record.index;
  add(std::move(a));
}

void PassVerifier::keepRun(const Model& model) {
  cacheUsable_ = nextBytes_ <= kMaxCacheBytes;
  cache_.swap(next_);
  next_.clear();
  if (!cacheUsable_) cache_.clear();
  cacheRevision_ = model.ids->revision;
}

PassAccuracyRow PassVerifier::verify(const Model& model, int seq, PassAccuracy& stats) {
  PassAccuracyRow row;
  row.seq = seq;
  const Graph& g = *model.graph;
  try {
    std::vector<Tensor> inputs;
    for (const Value* v : g.inputs()) {
      Tensor t;
      for (const auto& [name, tensor] : namedInputs_)
        if (name == v->name()) t = tensor;
      if (!t.valid() && v->constant()) t = *v->constant();
      if (!t.valid()) throw std::runtime_error("input '" + v->name() + "' is not one of the original inputs");
      inputs.push_back(std::move(t));
    }
    const bool arena = hasMemoryPlan(g);
    ExecutionOptions options = arena ? limits_ : reusingOptions(model, stats);
    options.opset = model.opsetFor("");
    options.functions = makeFunctionExpander(model);
    options.checkInputTypes = false;  // a pass may retype inputs (precision, bound shapes); the data stays the same
    std::vector<Tensor> out;
    if (arena) {
      // In the arena a node's numbers depend on where its tensors sit (mem.out) as well as on the graph: the run is
      // repeated unless neither changed since the last one.
      std::string signature = std::to_string(model.ids->definitionRevision);
      for (const Node* n : g.nodes()) signature += "|" + n->annotation("mem.out");
      if (signature == arenaSignature_ && arenaOutputs_.size() == baseline_.size()) {
        out = arenaOutputs_;
        stats.nodesReused = static_cast<int64_t>(g.nodes().size());
      } else {
        out = runInArena(g, inputs, options).outputs;
        stats.nodesRun = static_cast<int64_t>(g.nodes().size());
        arenaSignature_ = std::move(signature);
        arenaOutputs_ = out;
      }
      cache_.clear();  // the reference-mode outputs are of no more use
      cacheUsable_ = false;
    } else {
      out = ReferenceExecutor(options).run(g, inputs);
      keepRun(model);
    }
    if (out.size() != baseline_.size())
      throw std::runtime_error("the graph has " + std::to_string(out.size()) + " outputs, the original " +
                               std::to_string(baseline_.size()));
    PrecisionGate gate = precisionGate(options_ ? *options_ : Options(), g);
    if (rtol_) gate.rtol = *rtol_;
    double maxAbs = 0, maxRel = 0, cosine = 1;
    for (size_t i = 0; i < out.size(); ++i) {
      // Compare in the original's element type: a precision pass may hand back fp16 where fp32 went in.
      const Tensor& want = baseline_[i];
      Tensor got = out[i];
      if (got.dtype() != want.dtype()) got = convertTensor(got, want.dtype());
      const OutputVerdict v = judgeOutput(outputNames_[i], got, want, gate);
      const TensorDifference& d = v.diff;
      if (!d.comparable) throw std::runtime_error("output '" + outputNames_[i] + "': " + d.firstMismatch);
      maxAbs = std::max(maxAbs, d.maxAbs);
      maxRel = std::max(maxRel, d.maxRel);
      cosine = std::min(cosine, d.cosine);
      if (!v.passed && row.status == "ok") {
        row.status = "exceeds";
        row.detail = "output '" + outputNames_[i] + "': " + v.reason + " (" + gate.describe() + ")";
      }
    }
    row.maxAbs = maxAbs;
    row.maxRel = maxRel;
    row.cosine = cosine;
  } catch (const NotEmulatable& e) {
    row.status = "not_emulatable";
    row.detail = e.what();
  } catch (const std::exception& e) {
    row.status = "error";
    row.detail = e.what();
  }
  return row;
}

int PassVerifier::firstExceeding() const {
  for (size_t i = 0; i < results_.size(); ++i)
    if (results_[i].row.status == "exceeds") return static_cast<int>(i);
  return -1;
}

}  // namespace kiln
