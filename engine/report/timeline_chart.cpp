#include "report/timeline_chart.h"

#include <algorithm>
#include <cmath>

#include "emulator/timing/soc_profile.h"
#include "emulator/timing/timeline_sim.h"
#include "ir/graph.h"

namespace kiln {

namespace {

std::string valueList(const std::vector<Value*>& values) {
  std::string s;
  for (const Value* v : values) {
    if (!v) continue;
    s += (s.empty() ? "" : ", ") + v->type().toString();
  }
  return s;
}

// The sizes the simulator's core pools have (timeline_sim.cpp uses the same rule for its utilisation).
std::map<std::string, int> unitCapacity(const SocProfile& p) {
  return {{"cube", p.aiCores},
          {"vector", p.vectorCores > 0 ? p.vectorCores : p.aiCores},
          {"aicpu", p.aiCpuCores},
          {"dma", p.dmaEngines}};
}

// Every EVENT_WAIT linked to the EVENT_RECORD of its event (an event id is recorded once per task list).
void linkEvents(TimelineChart& chart) {
  std::map<int, size_t> recordOf;
  for (size_t i = 0; i < chart.tasks.size(); ++i)
    if (chart.tasks[i].type == "EVENT_RECORD" && chart.tasks[i].event >= 0) recordOf.emplace(chart.tasks[i].event, i);
  for (size_t i = 0; i < chart.tasks.size(); ++i) {
    const TimelineChartTask& t = chart.tasks[i];
    if (t.type != "EVENT_WAIT" || t.event < 0) continue;
    if (auto r = recordOf.find(t.event); r != recordOf.end()) chart.arrows.push_back({r->second, i, t.event});
  }
}

bool runsWork(const TimelineChartTask& t) { return t.type != "EVENT_WAIT" && t.type != "EVENT_RECORD"; }

}  // namespace

void describeTimelineNode(TimelineChartTask& t, const Node* n) {
  if (!n) return;
  t.nodeId = n->id();
  t.nodeName = n->name();
  t.opType = n->qualifiedType();
  t.shapes = valueList(n->inputs()) + " → " + valueList(n->outputs());
}

std::unordered_map<int64_t, layout::NodeTiming> nodeTimingOf(const TimelineChart& chart) {
  std::unordered_map<int64_t, layout::NodeTiming> timing;
  for (const TimelineChartTask& t : chart.tasks) {
    if (t.nodeId <= 0) continue;
    layout::NodeTiming& n = timing[t.nodeId];
    if (t.measured) {
      n.measuredUs += t.endUs - t.startUs;
      ++n.measuredTasks;
    } else {
      n.us += t.endUs - t.startUs;
      n.dispatchUs += t.dispatchUs;
      n.bytes += t.bytes;
    }
  }
  return timing;
}

TimelineChart timelineChartFromSimulation(const Timeline& timeline, const SocProfile& profile) {
  TimelineChart chart;
  chart.source = "simulated on " + profile.name;
  chart.capacity = unitCapacity(profile);
  chart.latencyUs = timeline.latencyUs;
  chart.tasks.reserve(timeline.entries.size());
  for (const TimelineEntry& e : timeline.entries) {
    TimelineChartTask t;
    t.task = e.task;
    t.type = taskTypeName(e.type);
    describeTimelineNode(t, e.node);
    t.stream = e.stream;
    t.event = e.event;
    t.unit = std::string(simUnitName(e.unit));
    t.cores = e.cores;
    t.startUs = e.startUs;
    t.endUs = e.endUs;
    t.dispatchUs = e.dispatchUs;
    t.flops = e.flops;
    t.bytes = e.bytes;
    t.memoryBound = e.memoryBound;
    t.costUnknown = e.costUnknown;
    t.critical = e.critical;
    chart.tasks.push_back(std::move(t));
  }
  linkEvents(chart);
  return chart;
}

TimelineChart timelineChartFromRows(const std::vector<TimelineRow>& rows, const Graph& g, const SocProfile& profile) {
  TimelineChart chart;
  chart.source = "recorded by kiln run (" + profile.name + ")";
  chart.capacity = unitCapacity(profile);
  for (const TimelineRow& r : rows) {
    // A history is a file anyone can edit: times must be finite, ordered and not absurd (a year in µs).
    constexpr double kMaxUs = 3.2e13;
    const bool sane = std::isfinite(r.startUs) && std::isfinite(r.endUs) && r.startUs >= 0 && r.endUs >= r.startUs &&
                      r.endUs < kMaxUs && std::isfinite(r.flops) && std::isfinite(r.bytes) && r.stream >= 0 &&
                      r.stream < 1'000'000 && r.task >= 0;
    if (!sane) {
      ++chart.droppedRows;
      continue;
    }
    TimelineChartTask t;
    t.task = r.task;
    t.type = r.type;
    if (r.nodeId) {
      if (const Node* n = g.findNode(*r.nodeId)) describeTimelineNode(t, n);
      else t.nodeId = *r.nodeId;
    }
    t.stream = r.stream;
    t.event = r.event.value_or(-1);
    t.unit = r.unit;
    t.cores = std::max(0, r.cores);
    t.startUs = r.startUs;
    t.endUs = r.endUs;
    t.flops = std::max(0.0, r.flops);
    t.bytes = std::max(0.0, r.bytes);
    t.memoryBound = r.memoryBound;
    t.costUnknown = r.costUnknown;
    t.critical = r.critical;
    chart.latencyUs = std::max(chart.latencyUs, t.endUs);
    chart.tasks.push_back(std::move(t));
  }
  std::stable_sort(chart.tasks.begin(), chart.tasks.end(),
                   [](const TimelineChartTask& a, const TimelineChartTask& b) { return a.task < b.task; });
  linkEvents(chart);
  return chart;
}

std::vector<TimelineChartLane> timelineLanes(const TimelineChart& chart, bool byUnit) {
  std::vector<TimelineChartLane> lanes;
  const bool both = chart.measuredTasks > 0;
  auto keyOf = [&](const TimelineChartTask& t) -> std::string {
    const std::string side = t.measured ? "0" : "1";  // measured lanes first
    if (!byUnit) {
      // Streams sort numerically: zero-padded keys, labels without the padding.
      std::string n = std::to_string(t.stream);
      return side + std::string(8 - std::min<size_t>(8, n.size()), '0') + n;
    }
    static const std::vector<std::string> order = {"cube", "vector", "aicpu", "dma"};
    const auto it = std::find(order.begin(), order.end(), t.unit);
    return side + std::to_string(it == order.end() ? order.size() : size_t(it - order.begin())) + t.unit;
  };
  std::map<std::string, std::vector<size_t>> members;
  for (size_t i = 0; i < chart.tasks.size(); ++i) members[keyOf(chart.tasks[i])].push_back(i);
  for (auto& member : members) {
    std::vector<size_t>& tasks = member.second;
    TimelineChartLane lane;
    const TimelineChartTask& first = chart.tasks[tasks.front()];
    lane.label = byUnit ? (first.unit == "stream" ? std::string("events") : first.unit)
                        : "stream " + std::to_string(first.stream);
    if (both) lane.label = (first.measured ? "measured · " : "simulated · ") + lane.label;
    if (!byUnit) lane.stream = first.stream;
    std::stable_sort(tasks.begin(), tasks.end(),
                     [&](size_t a, size_t b) { return chart.tasks[a].startUs < chart.tasks[b].startUs; });
    lane.tasks = std::move(tasks);
    // Rows: each task goes to the first row free at its start (tasks of one unit run concurrently on its cores).
    std::vector<double> rowEnd;
    double streamBusy = 0, coveredUntil = 0, coreTime = 0;
    for (size_t i : lane.tasks) {
      const TimelineChartTask& t = chart.tasks[i];
      size_t r = 0;
      while (r < rowEnd.size() && rowEnd[r] > t.startUs) ++r;
      if (r == rowEnd.size()) rowEnd.push_back(0);
      rowEnd[r] = std::max(t.endUs, t.startUs);
      lane.row.push_back(int(r));
      coreTime += (t.endUs - t.startUs) * std::max(t.cores, 1);
      if (runsWork(t)) {  // union of work intervals: a stream is busy while some task of it runs
        const double from = std::max(t.startUs, coveredUntil);
        if (t.endUs > from) streamBusy += t.endUs - from;
        coveredUntil = std::max(coveredUntil, t.endUs);
      }
    }
    lane.rows = std::max<int>(1, int(rowEnd.size()));
    if (byUnit) {
      lane.busyUs = coreTime;
      const auto cap = chart.capacity.find(first.unit);
      lane.hasUtilisation = cap != chart.capacity.end() && cap->second > 0;
      lane.hasUtilisation = lane.hasUtilisation && !first.measured;  // a profile names no core pool's size
      if (lane.hasUtilisation && chart.latencyUs > 0) lane.utilisation = coreTime / (cap->second * chart.latencyUs);
    } else {
      lane.busyUs = streamBusy;
      lane.hasUtilisation = true;
      const double span = first.measured ? chart.measuredSpanUs : chart.latencyUs;
      if (span > 0) lane.utilisation = streamBusy / span;
    }
    lanes.push_back(std::move(lane));
  }
  return lanes;
}

}  // namespace kiln
