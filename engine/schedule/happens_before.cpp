#include "schedule/happens_before.h"
#include "util/flat_ptr_map.h"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace kiln {

HappensBefore::HappensBefore(const std::vector<Node*>& order) {
  const auto streamOf = streamsFromAnnotations(order);
  std::map<int, int> dense;  // stream id -> 0..S-1, in id order
  for (Node* n : order) {
    auto it = streamOf.find(n);
    dense.emplace(it == streamOf.end() ? 0 : it->second, 0);
  }
  for (auto& [id, d] : dense) d = streams_++;
  FlatPtrMap<const Node*, int64_t> stepOf;
  for (size_t i = 0; i < order.size(); ++i) {
    auto it = streamOf.find(order[i]);
    stream_.push_back(dense.at(it == streamOf.end() ? 0 : it->second));
    stepOf.emplace(order[i], int64_t(i));
  }
  for (const SyncEvent& e : eventsFromAnnotations(order)) {
    auto p = stepOf.find(e.producer), c = stepOf.find(e.consumer);
    // An event recorded after its waiter (never so in a compile of ours) orders nothing: not ours to judge here.
    if (p != stepOf.end() && c != stepOf.end() && p->second < c->second) waits_[c->second].push_back(p->second);
  }
  tail_.assign(size_t(streams_), -1);
  before_.reserve(order.size());
}

void HappensBefore::runToEnd() {
  while (current_ + 1 < steps()) advance();
}

int64_t HappensBefore::advance() {
  if (current_ + 1 >= steps()) throw std::out_of_range("HappensBefore: no step left");
  const int64_t i = ++current_;
  const int s = stream_[size_t(i)];
  const int64_t prev = tail_[size_t(s)];
  before_.push_back(prev >= 0 ? before_[size_t(prev)] : std::vector<int64_t>(size_t(streams_), -1));
  if (prev >= 0) before_.back()[size_t(s)] = prev;
  if (auto w = waits_.find(i); w != waits_.end())
    for (int64_t p : w->second) wait(p);
  tail_[size_t(s)] = i;
  return i;
}

void HappensBefore::wait(int64_t earlier) {
  if (earlier < 0 || earlier >= current_) throw std::out_of_range("HappensBefore: can only wait for an earlier step");
  std::vector<int64_t>& k = before_[size_t(current_)];
  const std::vector<int64_t>& e = before_[size_t(earlier)];
  for (size_t q = 0; q < k.size(); ++q) k[q] = std::max(k[q], e[q]);
  auto& own = k[size_t(stream_[size_t(earlier)])];
  own = std::max(own, earlier);
}

bool HappensBefore::knows(int64_t at, int64_t step) const {
  if (step < 0) return true;
  if (at <= step || at > current_) return false;
  return before_[size_t(at)][size_t(stream_[size_t(step)])] >= step;
}

}  // namespace kiln
