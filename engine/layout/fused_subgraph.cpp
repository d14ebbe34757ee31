#include "layout/fused_subgraph.h"

#include <algorithm>
#include <charconv>
#include <tuple>
#include <set>

#include "ir/fused_node.h"
#include "util/json.h"

namespace kiln::layout {

namespace {

std::string text(const Json* j) {
  if (!j) return {};
  if (j->isString()) return j->asString();
  return j->dump();
}

int64_t number(const Json* j) {
  const std::string s = text(j);
  int64_t v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

}  // namespace

FusionIndex::FusionIndex(std::vector<FusionRecord> records) : records_(std::move(records)) {
  std::sort(records_.begin(), records_.end(), [](const FusionRecord& a, const FusionRecord& b) {
    return std::tie(a.pass, a.fusedNode) < std::tie(b.pass, b.fusedNode);
  });
  for (size_t i = 0; i < records_.size(); ++i) {
    byFused_.emplace(records_[i].fusedNode, i);
    for (int64_t id : records_[i].replaced) byOriginal_[id].push_back(i);
  }
}

const FusionRecord* FusionIndex::fusion(int64_t fusedNode) const {
  auto it = byFused_.find(fusedNode);
  return it == byFused_.end() ? nullptr : &records_[it->second];
}

const FusionRecord* FusionIndex::absorber(int64_t node) const {
  const auto chain = absorberChain(node);
  return chain.empty() ? nullptr : chain.front();
}

std::vector<const FusionRecord*> FusionIndex::absorberChain(int64_t node) const {
  std::vector<const FusionRecord*> chain;
  const FusionRecord* self = fusion(node);
  // A fused node is held by the fusions recorded after it whose originals include all of its own.
  const int64_t key = self && !self->replaced.empty() ? self->replaced.front() : node;
  auto it = byOriginal_.find(key);
  if (it == byOriginal_.end()) return chain;
  for (size_t i : it->second) {
    const FusionRecord& f = records_[i];
    if (self && (&f == self || f.pass <= self->pass ||
                 !std::includes(f.replaced.begin(), f.replaced.end(), self->replaced.begin(), self->replaced.end())))
      continue;
    chain.push_back(&f);
  }
  return chain;
}

FusionIndex readFusions(const HistoryReader& reader, int64_t runId) {
  std::vector<FusionRecord> records;
  for (const NodeRow& row : reader.fusedNodeRows(runId)) {
    if (!records.empty() && records.back().fusedNode == row.id) continue;  // a later version of the same node
    try {
      const Json ann = Json::parse(row.annotationsJson);
      if (!ann.isObject() || !ann.find("fusion.rule")) continue;
      FusionRecord f;
      f.fusedNode = row.id;
      f.pass = row.span.firstPass;
      f.rule = text(ann.find("fusion.rule"));
      f.name = row.name;
      f.opType = row.domain.empty() || row.domain == "ai.onnx" ? row.opType : row.domain + ":" + row.opType;
      f.replaced = nodeIdList(text(ann.find("fusion.replaced")));
      std::sort(f.replaced.begin(), f.replaced.end());
      f.hbmBytesSaved = number(ann.find("fusion.hbm_bytes_saved"));
      f.unknownSizedTensors = number(ann.find("fusion.hbm_unknown_tensors"));
      records.push_back(std::move(f));
    } catch (const std::exception&) {
      // Annotations not written by Kiln: no fusion record rather than a failure.
    }
  }
  return FusionIndex(std::move(records));
}

PassView buildFusedSubgraphView(const HistoryReader& reader, int64_t runId, const FusionIndex& fusions,
                                const FusionRecord& f) {
  int before = -1;
  for (const PassInfo& p : reader.passes(runId))
    if (p.seq < f.pass) before = p.seq;
  if (before < 0) throw HistoryError("run " + std::to_string(runId) + " recorded no pass before pass " +
                                     std::to_string(f.pass) + ", which created node " + std::to_string(f.fusedNode));
  const PassView full = buildPassView(reader, runId, before, -1);
  std::set<int64_t> group;
  for (int64_t id : f.replaced)
    if (full.node(id)) group.insert(id);
  for (const FusionRecord& inner : fusions.records())
    if (&inner != &f && inner.pass < f.pass && !inner.replaced.empty() && full.node(inner.fusedNode) &&
        std::includes(f.replaced.begin(), f.replaced.end(), inner.replaced.begin(), inner.replaced.end()))
      group.insert(inner.fusedNode);
  PassView view;
  view.runId = runId;
  view.toPass = before;
  view.after = full.after;
  std::set<int64_t> terminals;
  std::vector<PassViewNode> extra;  // terminals, placed before (inputs) or after (outputs) the group
  auto terminal = [&](int64_t id, int64_t valueId, PassViewNode::Kind kind) {
    if (!terminals.insert(id).second) return;
    PassViewNode t;
    t.id = id;
    t.kind = kind;
    const ValueRow* v = full.after.value(valueId);
    t.name = v ? v->name : "value " + std::to_string(valueId);
    t.opType = kind == PassViewNode::Kind::Input ? "input" : "output";
    extra.push_back(std::move(t));
  };
  for (const NodeEdge& e : full.edges) {
    const bool from = group.count(e.from) > 0, to = group.count(e.to) > 0;
    if (from && to) {
      view.edges.push_back(e);
    } else if (to) {
      terminal(inputTerminal(e.valueId), e.valueId, PassViewNode::Kind::Input);
      view.edges.push_back({inputTerminal(e.valueId), e.to, e.valueId});
    } else if (from) {
      terminal(outputTerminal(e.valueId), e.valueId, PassViewNode::Kind::Output);
      view.edges.push_back({e.from, outputTerminal(e.valueId), e.valueId});
    }
  }
  for (const PassViewNode& t : extra)
    if (t.kind == PassViewNode::Kind::Input) view.nodes.push_back(t);
  for (const PassViewNode& n : full.nodes)
    if (n.kind == PassViewNode::Kind::Op && group.count(n.id)) {
      view.nodes.push_back(n);
      ++view.ops;
    }
  for (const PassViewNode& t : extra)
    if (t.kind == PassViewNode::Kind::Output) view.nodes.push_back(t);
  for (size_t i = 0; i < view.nodes.size(); ++i) view.index[view.nodes[i].id] = i;
  return view;
}

}  // namespace kiln::layout
