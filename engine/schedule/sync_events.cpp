#include "schedule/sync_events.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <string>

#include "ir/graph.h"

namespace kiln {

std::vector<SyncEvent> crossStreamEvents(const std::vector<Node*>& order,
                                         const FlatPtrMap<const Node*, int>& streamOf, int firstId) {
  std::vector<SyncEvent> events;
  int next = firstId;
  for (Node* consumer : order) {
    const auto c = streamOf.find(consumer);
    if (c == streamOf.end()) continue;
    for (Node* producer : consumer->graph()->predecessorsOf(*consumer)) {
      const auto p = streamOf.find(producer);
      if (p != streamOf.end() && p->second != c->second) events.push_back({next++, producer, consumer});
    }
  }
  return events;
}

std::vector<SyncEvent> withoutRedundantEvents(const std::vector<Node*>& order,
                                              const FlatPtrMap<const Node*, int>& streamOf,
                                              const std::vector<SyncEvent>& events) {
  int numStreams = 0;
  for (const auto& [n, s] : streamOf) numStreams = std::max(numStreams, s + 1);
  FlatPtrMap<const Node*, size_t> orderIndex;
  for (size_t i = 0; i < order.size(); ++i) orderIndex.emplace(order[i], i);
  FlatPtrMap<const Node*, std::vector<const SyncEvent*>> incoming;
  FlatPtrMap<const Node*, bool> recorders;
  for (const SyncEvent& e : events) {
    incoming[e.consumer].push_back(&e);
    recorders[e.producer] = true;
  }
  // clock[s][t]: the last position on stream t known to be complete when stream s reaches its current position
  // (-1: nothing). A recorder keeps a copy of its stream's clock as it was right after it ran.
  std::vector<std::vector<int>> clock(static_cast<size_t>(numStreams), std::vector<int>(numStreams, -1));
  std::vector<int> nextPos(static_cast<size_t>(numStreams), 0);
  FlatPtrMap<const Node*, std::vector<int>> clockAfter;
  FlatPtrMap<const Node*, int> position;
  std::vector<SyncEvent> kept;
  for (Node* n : order) {
    const auto sIt = streamOf.find(n);
    if (sIt == streamOf.end()) continue;
    const auto s = static_cast<size_t>(sIt->second);
    if (auto in = incoming.find(n); in != incoming.end()) {
      // The latest producers first: waiting for them may already cover the earlier ones.
      std::vector<const SyncEvent*>& waits = in->second;
      std::sort(waits.begin(), waits.end(), [&](const SyncEvent* a, const SyncEvent* b) {
        return orderIndex.at(a->producer) > orderIndex.at(b->producer);
      });
      for (const SyncEvent* e : waits) {
        const auto p = clockAfter.find(e->producer);
        if (p == clockAfter.end()) continue;  // producer not scheduled before its consumer: not ours to judge
        const auto t = static_cast<size_t>(streamOf.at(e->producer));
        if (t == s || clock[s][t] >= position.at(e->producer)) continue;  // implied by an earlier wait
        kept.push_back(*e);
        for (size_t k = 0; k < clock[s].size(); ++k) clock[s][k] = std::max(clock[s][k], p->second[k]);
      }
    }
    position[n] = nextPos[s]++;
    clock[s][s] = position[n];
    if (recorders.count(n)) clockAfter[n] = clock[s];
  }
  std::sort(kept.begin(), kept.end(), [](const SyncEvent& a, const SyncEvent& b) { return a.id < b.id; });
  return kept;
}

namespace {

std::vector<int> parseIds(const std::string& text) {
  std::vector<int> ids;
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end) {
    int v = 0;
    auto [next, ec] = std::from_chars(p, end, v);
    if (ec != std::errc()) break;  // not ours: annotations are written by writeEventAnnotations only
    ids.push_back(v);
    p = next;
    if (p < end && *p == ',') ++p;
  }
  return ids;
}

}  // namespace

std::string joinIds(const std::vector<int>& ids) {
  std::string s;
  for (int id : ids) s += (s.empty() ? "" : ",") + std::to_string(id);
  return s;
}

FlatPtrMap<const Node*, int> streamsFromAnnotations(const std::vector<Node*>& order) {
  FlatPtrMap<const Node*, int> out;
  for (Node* n : order) {
    const std::vector<int> s = parseIds(n->annotation("stream"));
    if (s.size() == 1) out[n] = s[0];
  }
  return out;
}

std::vector<SyncEvent> eventsFromAnnotations(const std::vector<Node*>& order) {
  std::map<int, SyncEvent> byId;
  for (Node* n : order) {
    for (int id : parseIds(n->annotation("event.record"))) byId[id].producer = n;
    for (int id : parseIds(n->annotation("event.wait"))) byId[id].consumer = n;
  }
  std::vector<SyncEvent> out;
  for (auto& [id, e] : byId)
    if (e.producer && e.consumer) out.push_back({id, e.producer, e.consumer});
  return out;
}

int writeEventAnnotations(const std::vector<Node*>& order, const std::vector<SyncEvent>& events) {
  FlatPtrMap<const Node*, std::vector<int>> records, waits;
  for (const SyncEvent& e : events) {
    records[e.producer].push_back(e.id);
    waits[e.consumer].push_back(e.id);
  }
  int changed = 0;
  auto write = [&changed](Node* n, const std::string& key, const std::vector<int>* ids) {
    const std::string value = ids ? joinIds(*ids) : std::string();
    if (n->annotation(key) == value) return false;
    if (value.empty())
      n->eraseAnnotation(key);
    else
      n->setAnnotation(key, value);
    return true;
  };
  for (Node* n : order) {
    const auto r = records.find(n);
    const auto w = waits.find(n);
    const bool a = write(n, "event.record", r == records.end() ? nullptr : &r->second);
    const bool b = write(n, "event.wait", w == waits.end() ? nullptr : &w->second);
    changed += (a || b) ? 1 : 0;
  }
  return changed;
}

}  // namespace kiln
