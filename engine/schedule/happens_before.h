#pragma once
// What has certainly finished when a step starts, across streams: vector clocks over an execution order, driven by
// stream order and events (record after a step, wait before a step). clockBefore(step)[q] = the last step of stream
// q that happened before `step` (-1: none).
//
// Built step by step, so a caller can add waits as it goes (MemoryReuseEvents adds the events its plan needs at the
// step that reuses a block): advance() computes the next step's clock from its stream and the events it waits for;
// wait() makes the current step also wait for an earlier one.
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "schedule/sync_events.h"

namespace kiln {

class HappensBefore {
 public:
  // `order`: the steps; each step's stream and the events come from the "stream" / "event.*" annotations
  // (a step without a stream runs on stream 0).
  explicit HappensBefore(const std::vector<Node*>& order);

  // Every step, with only the annotated events.
  void runToEnd();

  // The next step; returns its index. Its clock starts from its stream's previous step and every event it waits for.
  int64_t advance();
  // The current step also waits for `earlier` (< current) to finish.
  void wait(int64_t earlier);

  int64_t steps() const { return int64_t(stream_.size()); }
  int64_t current() const { return current_; }
  int streamOf(int64_t step) const { return stream_[size_t(step)]; }  // dense: 0..streams()-1
  int streams() const { return streams_; }
  // Has `step` certainly finished before `at` starts? (Both advanced past; step < at.)
  bool knows(int64_t at, int64_t step) const;

 private:
  int streams_ = 0;
  std::vector<int> stream_;                                  // per step, dense stream index
  std::unordered_map<int64_t, std::vector<int64_t>> waits_;  // step -> the steps whose events it waits for
  std::vector<std::vector<int64_t>> before_;                 // per advanced step: its clock as it starts
  std::vector<int64_t> tail_;                                // per stream: its latest advanced step (-1)
  int64_t current_ = -1;
};

}  // namespace kiln
