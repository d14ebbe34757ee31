#include "passes/pass_manager.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "io/om/om_writer.h"
#include "io/onnx/onnx_writer.h"
#include "ir/model.h"
#include "ir/verifier.h"
#include "util/units.h"

namespace kiln {

std::string_view stageName(Stage s) {
  switch (s) {
    case Stage::Prepare: return "prepare";
    case Stage::Optimize: return "optimize";
    case Stage::Compile: return "compile";
  }
  return "?";
}

// ------------------------------------------------------------------------------------------------ NodePass

namespace {
// A NodePass's per-node state (queued? visits so far?) in a table indexed by node id: ids are handed out densely by
// the model's IdSource, so on a 100k-node graph this replaced a hash set and a hash map whose lookups and
// allocations were most of a pass that changed little. Ids far beyond the live count (a history replayed with
// sparse ids) live in a map, so the table never grows past a small multiple of the graph.
class NodeVisitTable {
 public:
  explicit NodeVisitTable(const IdSource& ids) : cap_(8 * ids.liveNodes.size() + (size_t{1} << 20)) {
    if (ids.nextNode > 0 && static_cast<uint64_t>(ids.nextNode) < cap_)
      dense_.resize(static_cast<size_t>(ids.nextNode) + ids.liveNodes.size() / 2 + 64);
  }
  bool markQueued(NodeId id) {
    Entry& e = at(id);
    if (e.queued) return false;
    e.queued = true;
    return true;
  }
  void unmarkQueued(NodeId id) { at(id).queued = false; }
  int countVisit(NodeId id) {
    Entry& e = at(id);
    if (e.visits < UINT16_MAX) ++e.visits;
    return e.visits;
  }

 private:
  struct Entry {
    uint16_t visits = 0;
    bool queued = false;
  };
  // An id's home never changes: below cap_ (fixed) it is a slot of dense_, above it an entry of sparse_.
  Entry& at(NodeId id) {
    if (id >= 0 && static_cast<uint64_t>(id) < cap_ && !dense_.empty()) {
      const auto i = static_cast<size_t>(id);
      if (i >= dense_.size()) dense_.resize(std::min<size_t>(cap_, std::max(i + 1, dense_.size() * 3 / 2)));
      return dense_[i];
    }
    return sparse_[id];
  }
  size_t cap_;
  std::vector<Entry> dense_;
  std::unordered_map<NodeId, Entry> sparse_;
};
}  // namespace


PassResult NodePass::run(PassContext& ctx) {
  PassResult result;
  // pass_time_budget_ms: checked every 256 visits, so a rewrite that crawls stops with the reason instead of hanging.
  const auto start = std::chrono::steady_clock::now();
  const int64_t budget = ctx.options.getInt(kPassTimeBudgetKey);
  size_t visitsDone = 0;
  auto checkBudget = [&] {
    if (budget <= 0 || ++visitsDone % 256 != 0) return;
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
    if (ms.count() > budget)
      throw std::runtime_error("stopped after " + std::to_string(ms.count()) + " ms and " +
                               std::to_string(visitsDone) + " node visits: over its time budget of " +
                               std::to_string(budget) + " ms (" + kPassTimeBudgetKey + ")");
  };
  begin(ctx);
  // Worklist of node ids (ids survive erasure; pointers would not). Seeded with every node of every graph in
  // order; a changed node's producers and consumers are queued again.
  std::vector<NodeId> queue;
  NodeVisitTable table(ctx.model.graph->ids());
  // A node anywhere in the model in O(1): fusions erase thousands of queued ids, and a lookup must not walk every
  // subgraph of the model to learn that one is gone.
  Graph* const main = ctx.model.graph.get();
  auto enqueue = [&](Node* n) {
    if (n && table.markQueued(n->id())) queue.push_back(n->id());
  };
  auto find = [&](NodeId id) -> Node* { return main->findNodeInTree(id); };
  queue.reserve(main->numNodesRecursive());
  ctx.model.graph->forEachGraph([&](Graph& g) {
    for (Node* n : g.nodes()) enqueue(n);
  });
  NodeWorklist work;
  std::vector<NodeId> neighbourIds;  // reused: most visits change nothing and must stay cheap
  for (size_t head = 0; head < queue.size(); ++head) {
    const NodeId id = queue[head];
    table.unmarkQueued(id);
    Node* n = find(id);
    if (!n || table.countVisit(id) > maxVisitsPerNode()) continue;
    checkBudget();
    // Neighbours are noted before the visit: the node may be erased by it.
    neighbourIds.clear();
    for (Value* in : n->inputs())
      if (in && in->producer()) neighbourIds.push_back(in->producer()->id());
    for (Value* out : n->outputs())
      if (out)
        for (const Use& u : out->uses()) neighbourIds.push_back(u.node->id());
    work.clear();
    if (!visit(*n, ctx, work, result)) continue;
    result.changed = true;
    // Revisit what changed, and the nodes around it (they may now match).
    for (NodeId nid : neighbourIds)
      if (Node* x = find(nid)) enqueue(x);
    for (Node* t : work.touchedNodes()) {
      enqueue(t);
      for (Value* in : t->inputs())
        if (in && in->producer()) enqueue(in->producer());
      for (Value* out : t->outputs())
        if (out)
          for (const Use& u : out->uses()) enqueue(u.node);
    }
    if (queue.size() > (1u << 26)) throw std::runtime_error("rewrite did not settle (worklist exploded)");
  }
  return result;
}

// ------------------------------------------------------------------------------------------------ PassManager

void PassManager::add(Stage stage, std::unique_ptr<Pass> pass) { passes_.push_back({stage, std::move(pass)}); }

void PassManager::sortByStage() {
  std::stable_sort(passes_.begin(), passes_.end(),
                   [](const Entry& a, const Entry& b) { return static_cast<int>(a.stage) < static_cast<int>(b.stage); });
}

std::vector<std::pair<Stage, std::string>> PassManager::passNames() const {
  std::vector<std::pair<Stage, std::string>> out;
  for (const auto& e : passes_) out.emplace_back(e.stage, e.pass->name());
  return out;
}

namespace {
bool sameName(const std::string& a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return std::tolower(x) == std::tolower(y); });
}
int64_t nodeCount(const Model& m) { return static_cast<int64_t>(m.graph->numNodesRecursive()); }
}  // namespace

RunSummary PassManager::run(Model& model, const Options& options) {
  RunSummary summary;
  summary.nodesBefore = nodeCount(model);
  const auto runStart = std::chrono::steady_clock::now();
  for (PassObserver* o : observers_) o->runStarted(model, options);

  // --until: the last pass to run (a pass name, or a stage name = its last pass).
  int lastIndex = static_cast<int>(passes_.size());
  if (!until_.empty()) {
    lastIndex = -1;
    for (size_t i = 0; i < passes_.size(); ++i)
      if (sameName(until_, passes_[i].pass->name()) || sameName(until_, stageName(passes_[i].stage)))
        lastIndex = static_cast<int>(i) + 1;
    if (lastIndex < 0) throw std::invalid_argument("--until: no pass or stage named '" + until_ + "'");
  }

  // A model another compiler already compiled (an .om) is shown with its own plan: no pass of ours runs over it.
  if (model.precompiled) {
    lastIndex = 0;
    summary.warnings.push_back("the model is already compiled (" + model.producerName +
                               "): its own streams, events and memory offsets are shown; Kiln's passes do not run");
  }
  const bool verify = options.getBool("verify_each_pass");
  // A pass is blamed only for problems it introduced: what the imported model already had (e.g. a type libonnx
  // 1.12 does not allow yet) is reported once as a warning.
  std::set<std::string> known;
  IncrementalVerifier verifier;
  if (verify)
    for (auto& p : verifier.check(model))
      if (known.insert(p).second) summary.warnings.push_back("model as imported: " + p);
  for (size_t i = 0; i < passes_.size() && static_cast<int>(i) < lastIndex; ++i) {
    if (cancel_ && cancel_->load()) {  // between passes only: a pass is never left half done
      summary.status = RunStatus::Stopped;
      summary.error = "cancelled before " + passes_[i].pass->name();
      break;
    }
    Pass& pass = *passes_[i].pass;
    PassRecord rec;
    rec.index = static_cast<int>(i) + 1;
    rec.stage = passes_[i].stage;
    rec.name = pass.name();
    rec.nodesBefore = nodeCount(model);
    for (PassObserver* o : observers_) o->beforePass(rec, model);
    const auto t0 = std::chrono::steady_clock::now();
    try {
      PassContext ctx{model, options, summary.warnings};
      PassResult r = pass.run(ctx);
      rec.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      // A pass that cannot stop itself (only node passes check the budget as they go) fails once it returns late.
      if (const int64_t budget = options.getInt(kPassTimeBudgetKey); budget > 0 && rec.ms > double(budget))
        throw std::runtime_error("took " + std::to_string(std::llround(rec.ms)) + " ms, over its time budget of " +
                                 std::to_string(budget) + " ms (" + kPassTimeBudgetKey + ")");
      rec.changed = r.changed;
      rec.counters = std::move(r.counters);
      // Verification is a check on the pass, not part of its cost.
      if (verify) {
        std::vector<std::string> fresh;
        for (auto& p : verifier.check(model))  // what this pass touched
          if (!known.count(p)) fresh.push_back(std::move(p));
        if (!fresh.empty())
          throw std::runtime_error("left an invalid graph: " + fresh.front() +
                                   (fresh.size() > 1 ? " (+" + std::to_string(fresh.size() - 1) + " more)" : ""));
      }
    } catch (const std::exception& e) {
      rec.error = e.what();
      summary.invalidModel = dynamic_cast<const InvalidModelError*>(&e) != nullptr;
      if (rec.ms == 0) rec.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    }
    rec.nodesAfter = nodeCount(model);
    summary.passes.push_back(rec);
    if (!rec.error.empty()) {
      summary.status = RunStatus::Failed;
      summary.error = rec.name + ": " + rec.error;
      for (PassObserver* o : observers_) o->passFailed(rec, model);
      break;
    }
    for (PassObserver* o : observers_) o->afterPass(rec, model);
  }
  if (summary.status == RunStatus::Ok && lastIndex < static_cast<int>(passes_.size()) && !model.precompiled)
    summary.status = RunStatus::Stopped;
  summary.nodesAfter = nodeCount(model);
  summary.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - runStart).count();
  for (PassObserver* o : observers_) o->runFinished(summary, model);
  return summary;
}

// ------------------------------------------------------------------------------------------------ JSON

Json countersToJson(const std::map<std::string, int64_t>& counters) {
  Json c = Json::object();
  for (const auto& [k, v] : counters) c.set(k, v);
  return c;
}

Json passRecordToJson(const PassRecord& p) {
  Json j = Json::object();
  j.set("stage", std::string(stageName(p.stage)));
  j.set("name", p.name);
  j.set("ms", p.ms);
  j.set("changed", p.changed);
  j.set("nodes_before", p.nodesBefore);
  j.set("nodes_after", p.nodesAfter);
  j.set("counters", countersToJson(p.counters));
  if (!p.error.empty()) j.set("error", p.error);
  return j;
}

Json runSummaryToJson(const RunSummary& s) {
  Json j = Json::object();
  Json passes = Json::array();
  for (const PassRecord& p : s.passes) passes.push(passRecordToJson(p));
  j.set("passes", std::move(passes));
  j.set("nodes_before", s.nodesBefore);
  j.set("nodes_after", s.nodesAfter);
  j.set("ms", s.ms);
  j.set("status", s.status == RunStatus::Ok ? "ok" : s.status == RunStatus::Stopped ? "stopped" : "failed");
  if (!s.error.empty()) j.set("error", s.error);
  Json warnings = Json::array();
  for (const auto& w : s.warnings) warnings.push(w);
  j.set("warnings", std::move(warnings));
  return j;
}

// ------------------------------------------------------------------------------------------------ observers

// Columns: stage 9, pass 30, ms 9, nodes 17 (display width: "→" is one column).
void TimingTableObserver::runStarted(const Model&, const Options&) {
  out_ << padRight("stage", 10) << padRight("pass", 31) << padLeft("ms", 9) << padLeft("nodes", 19) << "  counters\n";
}

namespace {
std::string countersText(const std::map<std::string, int64_t>& c) {
  std::string s;
  for (const auto& [k, v] : c) s += (s.empty() ? "" : ", ") + k + " " + std::to_string(v);
  return s.empty() ? "-" : s;
}
}  // namespace

namespace {
std::string ms2(double ms) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", ms);
  return b;
}
}  // namespace

void TimingTableObserver::afterPass(const PassRecord& r, const Model&) {
  const std::string nodes = withThousands(r.nodesBefore) + " → " + withThousands(r.nodesAfter);
  out_ << padRight(std::string(stageName(r.stage)), 10) << padRight(r.name, 31) << padLeft(ms2(r.ms), 9)
       << padLeft(nodes, 19) << "  " << countersText(r.counters) << "\n";
}

void TimingTableObserver::passFailed(const PassRecord& r, const Model&) {
  out_ << std::string(stageName(r.stage)) << "  " << r.name << "  FAILED: " << r.error << "\n";
}

void TimingTableObserver::runFinished(const RunSummary& s, const Model&) {
  double passMs = 0;
  for (const auto& p : s.passes) passMs += p.ms;
  out_ << padRight("total", 41) << padLeft(ms2(passMs), 9)
       << padLeft(withThousands(s.nodesBefore) + " → " + withThousands(s.nodesAfter), 19) << "  (wall " << ms2(s.ms)
       << " ms incl. verification and recording)\n";
}

void DumpObserver::dump(int index, const std::string& name, const Model& m) {
  char file[64];
  if (format_ == DumpFormat::Onnx) {
    std::snprintf(file, sizeof file, "ge_onnx_%08d_graph_0_", index);
    writeOnnxFile(m, dir_ + "/" + file + name + ".onnx");
    return;
  }
  std::snprintf(file, sizeof file, "ge_proto_%08d_graph_0_", index);
  const std::string path = dir_ + "/" + file + name + ".txt";
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  const std::string text = om::modelDefText(m);
  if (!out.write(text.data(), std::streamsize(text.size())) || !out.flush())
    throw std::runtime_error("cannot write " + path);
}

void DumpObserver::runStarted(const Model& m, const Options&) {
  std::filesystem::create_directories(dir_);
  dump(0, "Import", m);
}

void DumpObserver::afterPass(const PassRecord& r, const Model& m) { dump(r.index, r.name, m); }

}  // namespace kiln
