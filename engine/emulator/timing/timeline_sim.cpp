#include "emulator/timing/timeline_sim.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <queue>
#include <stdexcept>
#include <unordered_map>

#include "ir/graph.h"

namespace kiln {

namespace {

constexpr int kNone = -1;

// A pool of identical cores (or engines): when each becomes free and which task held it last.
class Pool {
 public:
  explicit Pool(int size) : size_(size) {
    for (int i = 0; i < size; ++i) free_.push({0.0, kNone});
  }
  int size() const { return size_; }
  // Takes `count` cores for a task that could start at `earliest`; returns when they are all free and the task that
  // freed the last of them (the one that delayed it, if any).
  std::pair<double, int> acquire(int count, double earliest, std::vector<std::pair<double, int>>& taken) {
    taken.clear();
    double start = earliest;
    int blocker = kNone;
    for (int i = 0; i < count && !free_.empty(); ++i) {
      taken.push_back(free_.top());
      free_.pop();
      if (taken.back().first > start) {
        start = taken.back().first;
        blocker = taken.back().second;
      }
    }
    return {start, blocker};
  }
  void release(const std::vector<std::pair<double, int>>& taken, double end, int task) {
    for (size_t i = 0; i < taken.size(); ++i) free_.push({end, task});
  }

 private:
  using Slot = std::pair<double, int>;
  int size_;
  std::priority_queue<Slot, std::vector<Slot>, std::greater<Slot>> free_;
};

}  // namespace

Timeline simulateTimeline(const std::vector<Task>& tasks, const SocProfile& p, bool sunk) {
  Timeline tl;
  tl.entries.resize(tasks.size());
  std::vector<TaskCost> costs(tasks.size());
  std::map<int, std::vector<int>> byStream;  // stream -> task indices in list order
  for (size_t i = 0; i < tasks.size(); ++i) {
    costs[i] = taskCost(tasks[i], p);
    byStream[tasks[i].stream].push_back(static_cast<int>(i));
  }
  // Host launches, one after another in list order, each after the previous one.
  std::vector<double> launched(tasks.size(), 0.0);
  if (!sunk) {
    for (size_t i = 0; i < tasks.size(); ++i) launched[i] = static_cast<double>(i + 1) * p.hostLaunchUs;
    tl.hostLaunches = static_cast<int64_t>(tasks.size());
    tl.hostLaunchUs = static_cast<double>(tasks.size()) * p.hostLaunchUs;
  }
  Pool cube(p.aiCores), vector(p.vectorCores > 0 ? p.vectorCores : 0), aicpu(p.aiCpuCores), dma(p.dmaEngines);
  auto poolOf = [&](SimUnit u) -> Pool* {
    switch (u) {
      case SimUnit::Cube:
        return &cube;
      case SimUnit::Vector:
        return p.vectorCores > 0 ? &vector : &cube;  // without separate Vector cores, the AI Cores run both
      case SimUnit::AiCpu:
        return &aicpu;
      case SimUnit::Dma:
        return &dma;
      case SimUnit::Stream:
        return nullptr;
    }
    return nullptr;
  };

  struct StreamState {
    const std::vector<int>* tasks;
    size_t next = 0;
    double free = 0;
    int last = kNone;
  };
  std::vector<StreamState> streams;
  for (auto& [id, list] : byStream) streams.push_back({&list});
  std::unordered_map<int, std::pair<double, int>> recorded;  // event -> (time, recording task)
  std::vector<int> pred(tasks.size(), kNone);                // what let each task start
  std::vector<std::pair<double, int>> taken;
  size_t done = 0;
  while (done < tasks.size()) {
    // The stream whose head can start first (ignoring core contention, which only delays it further).
    int best = kNone;
    double bestStart = std::numeric_limits<double>::infinity();
    int bestPred = kNone;
    for (size_t s = 0; s < streams.size(); ++s) {
      StreamState& st = streams[s];
      if (st.next >= st.tasks->size()) continue;
      const int t = (*st.tasks)[st.next];
      double ready = st.free;
      int why = st.last;
      if (tasks[size_t(t)].type == TaskType::EventWait) {
        auto r = recorded.find(tasks[size_t(t)].event);
        if (r == recorded.end()) continue;  // not recorded yet: this stream is blocked
        if (r->second.first > ready) {
          ready = r->second.first;
          why = r->second.second;
        }
      }
      if (launched[size_t(t)] > ready) {
        ready = launched[size_t(t)];
        why = t > 0 ? t - 1 : kNone;  // the host was busy launching its predecessors
      }
      if (ready < bestStart) {
        bestStart = ready;
        best = static_cast<int>(s);
        bestPred = why;
      }
    }
    if (best == kNone) {
      for (const StreamState& st : streams)
        if (st.next < st.tasks->size())
          throw std::runtime_error("task list deadlock: stream " + std::to_string(tasks[size_t((*st.tasks)[st.next])].stream) +
                                   " waits for event " + std::to_string(tasks[size_t((*st.tasks)[st.next])].event) +
                                   " that no runnable stream records");
    }
    StreamState& st = streams[size_t(best)];
    const int t = (*st.tasks)[st.next];
    const TaskCost& c = costs[size_t(t)];
    // A task on a core pool holds its cores only while it computes: its fixed cost (dispatch by the stream's task
    // scheduler) runs ahead on the stream. So one stream pays every dispatch in series, while several streams
    // dispatch one kernel while another computes — where multi-stream execution gains on graphs of small kernels.
    Pool* pool = poolOf(c.unit);
    const bool onCores = pool && pool->size() > 0;
    // A calibrated op type's setup was measured on the device, inside the task (msprof's Task Duration): it stays on
    // the cores.
    const double dispatch = onCores && !c.calibrated ? std::clamp(c.fixedUs, 0.0, c.durationUs) : 0.0;
    double computeStart = bestStart + dispatch;
    if (onCores) {
      auto [when, blocker] = pool->acquire(std::min(std::max(c.cores, 1), pool->size()), computeStart, taken);
      if (when > computeStart) {
        computeStart = when;
        bestPred = blocker;
      }
    }
    // The entry spans the compute (the cores' busy time); the dispatch is the gap before it on its stream.
    const double start = computeStart;
    const double end = computeStart + c.durationUs - dispatch;
    if (onCores) pool->release(taken, end, t);
    pred[size_t(t)] = bestPred;
    st.free = end;
    st.last = t;
    ++st.next;
    ++done;
    if (tasks[size_t(t)].type == TaskType::EventRecord) recorded[tasks[size_t(t)].event] = {end, t};
    TimelineEntry& e = tl.entries[size_t(t)];
    e.task = t;
    e.type = tasks[size_t(t)].type;
    e.node = tasks[size_t(t)].node;
    e.stream = tasks[size_t(t)].stream;
    e.event = tasks[size_t(t)].event;
    e.unit = c.unit;
    e.cores = c.cores;
    e.startUs = start;
    e.endUs = end;
    e.dispatchUs = dispatch;
    e.flops = c.flops;
    e.bytes = c.bytes;
    e.memoryBound = c.memoryBound;
    e.costUnknown = c.costUnknown;
    if (c.costUnknown) ++tl.unknownCostTasks;
  }
  // Latency, utilisation and the critical path (walked back from the task that ends last).
  int last = kNone;
  for (const TimelineEntry& e : tl.entries)
    if (last == kNone || e.endUs > tl.entries[size_t(last)].endUs) last = e.task;
  tl.latencyUs = last == kNone ? 0 : tl.entries[size_t(last)].endUs;
  std::map<SimUnit, double> busy;
  for (const TimelineEntry& e : tl.entries) busy[e.unit] += (e.endUs - e.startUs) * std::max(e.cores, 1);
  const std::vector<std::pair<SimUnit, int>> capacity = {{SimUnit::Cube, p.aiCores},
                                                         {SimUnit::Vector, p.vectorCores > 0 ? p.vectorCores : p.aiCores},
                                                         {SimUnit::AiCpu, p.aiCpuCores},
                                                         {SimUnit::Dma, p.dmaEngines}};
  for (const auto& [unit, cap] : capacity) {
    UnitUtilisation u{unit, cap, busy[unit], 0};
    if (tl.latencyUs > 0) u.utilisation = u.busyUs / (cap * tl.latencyUs);
    tl.units.push_back(u);
  }
  std::vector<char> seen(tasks.size(), 0);
  for (int t = last; t != kNone && !seen[size_t(t)]; t = pred[size_t(t)]) {
    seen[size_t(t)] = 1;
    tl.criticalPath.push_back(t);
    tl.entries[size_t(t)].critical = true;
  }
  std::reverse(tl.criticalPath.begin(), tl.criticalPath.end());
  return tl;
}

std::vector<TimelineRow> timelineRows(const Timeline& timeline) {
  std::vector<TimelineRow> rows;
  rows.reserve(timeline.entries.size());
  for (const TimelineEntry& e : timeline.entries) {
    TimelineRow r;
    r.task = e.task;
    r.type = taskTypeName(e.type);
    if (e.node) r.nodeId = static_cast<int64_t>(e.node->id());
    r.stream = e.stream;
    if (e.event >= 0) r.event = e.event;
    r.unit = std::string(simUnitName(e.unit));
    r.cores = e.cores;
    r.startUs = e.startUs;
    r.endUs = e.endUs;
    r.flops = e.flops;
    r.bytes = e.bytes;
    r.memoryBound = e.memoryBound;
    r.costUnknown = e.costUnknown;
    r.critical = e.critical;
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace kiln
