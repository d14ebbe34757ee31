#include "report/measured_timeline.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>

#include "io/msprof/measured_tensors.h"

namespace kiln {

namespace {

// The device counts as host-bound when it idles for more than half of the measured span.
constexpr double kHostBoundIdleShare = 0.5;

std::string lowerUnit(std::string taskType) {
  std::transform(taskType.begin(), taskType.end(), taskType.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  return taskType.empty() ? std::string("unknown") : taskType;
}

std::string shapesOf(const MeasuredTaskRow& r) {
  auto list = [](const std::string& shapes) {
    const auto parsed = msprof::parseShapeList(shapes);
    if (!parsed) return std::string("?");
    std::string s;
    for (const auto& e : *parsed) s += (s.empty() ? "" : ", ") + Shape::ofStatic(e).toString();
    return s;
  };
  return list(r.inputShapes) + " → " + list(r.outputShapes);
}

}  // namespace

std::vector<int64_t> measuredStaticLive(const std::vector<StaticMemoryRow>& rows, int64_t steps) {
  if (rows.empty() || steps <= 0) return {};
  // A difference array over the steps: +bytes at the start, -bytes at the end.
  std::vector<int64_t> delta(size_t(steps) + 1, 0);
  for (const StaticMemoryRow& r : rows) {
    if (r.bytes <= 0 || r.nodeStart < 0 || r.nodeStart >= steps) continue;
    const int64_t end = r.nodeEnd < 0 || r.nodeEnd >= steps ? steps : std::max(r.nodeEnd + 1, r.nodeStart + 1);
    delta[size_t(r.nodeStart)] += r.bytes;
    delta[size_t(end)] -= r.bytes;
  }
  std::vector<int64_t> live(size_t(steps), 0);
  int64_t running = 0;
  for (int64_t s = 0; s < steps; ++s) live[size_t(s)] = running += delta[size_t(s)];
  return live;
}

void addMeasuredTasks(TimelineChart& chart, const MeasuredRun& measured) {
  if (measured.tasks.empty()) return;
  const bool simulated = !chart.tasks.empty();
  int next = 0;
  for (const TimelineChartTask& t : chart.tasks) next = std::max(next, t.task + 1);
  double busy = 0, coveredUntil = 0, span = 0;
  std::vector<const MeasuredTaskRow*> byStart;
  for (const MeasuredTaskRow& r : measured.tasks) byStart.push_back(&r);
  std::stable_sort(byStart.begin(), byStart.end(),
                   [](const MeasuredTaskRow* a, const MeasuredTaskRow* b) { return a->startUs < b->startUs; });
  for (const MeasuredTaskRow* r : byStart) {
    TimelineChartTask t;
    t.task = next++;
    t.type = r->taskType;
    t.measured = true;
    t.nodeId = r->nodeId.value_or(0);
    t.nodeName = r->name;
    t.opType = r->opType;
    t.shapes = shapesOf(*r);
    t.stream = static_cast<int>(std::clamp<int64_t>(r->stream, 0, 999'999));
    t.unit = lowerUnit(r->taskType);
    t.cores = static_cast<int>(std::clamp<int64_t>(r->blockDim.value_or(0), 0, 1 << 20));
    t.startUs = r->startUs;
    t.endUs = r->startUs + r->durationUs;
    const double from = std::max(t.startUs, coveredUntil);
    if (t.endUs > from) busy += t.endUs - from;
    coveredUntil = std::max(coveredUntil, t.endUs);
    span = std::max(span, t.endUs);
    chart.tasks.push_back(std::move(t));
  }
  chart.measuredTasks = static_cast<int>(measured.tasks.size());
  chart.measuredSource = measured.profile.source;
  chart.measuredBusyUs = busy;
  chart.measuredSpanUs = span;
  if (!simulated) chart.latencyUs = span;  // (beside a simulation, latency stays the simulated one)
}

std::vector<MeasuredOpTimes> measuredBesideSimulated(const TimelineChart& chart) {
  std::map<int64_t, MeasuredOpTimes> byNode;
  for (const TimelineChartTask& t : chart.tasks) {
    if (t.nodeId <= 0) continue;
    MeasuredOpTimes& o = byNode[t.nodeId];
    o.nodeId = t.nodeId;
    if (t.measured) {
      if (o.name.empty()) {
        o.name = t.nodeName;
        o.opType = t.opType;
      }
      o.measuredUs += t.endUs - t.startUs;
      ++o.measuredTasks;
    } else if (t.type != "EVENT_RECORD" && t.type != "EVENT_WAIT") {
      o.simulated = true;
      o.simulatedUs += t.endUs - t.startUs + t.dispatchUs;  // as msprof's Task Duration counts scheduling
      o.name = t.nodeName;  // the compiled graph's names win
      o.opType = t.opType;
    }
  }
  std::vector<MeasuredOpTimes> out;
  for (auto& [id, o] : byNode) {
    if (o.measuredTasks == 0) continue;
    o.measuredUs /= static_cast<double>(o.measuredTasks);
    if (o.simulated && o.measuredUs > 0) o.ratio = o.simulatedUs / o.measuredUs;
    out.push_back(o);
  }
  auto badness = [](const MeasuredOpTimes& o) { return o.ratio > 0 ? std::fabs(std::log(o.ratio)) : 0.0; };
  std::stable_sort(out.begin(), out.end(), [&](const MeasuredOpTimes& a, const MeasuredOpTimes& b) {
    if (a.simulated != b.simulated) return a.simulated;
    if (a.simulated) return badness(a) > badness(b);
    return a.measuredUs > b.measuredUs;
  });
  return out;
}

std::string hostGapNote(const TimelineChart& chart) {
  if (chart.measuredTasks == 0 || chart.measuredSpanUs <= 0) return {};
  const double idle = chart.measuredSpanUs - chart.measuredBusyUs;
  if (idle <= kHostBoundIdleShare * chart.measuredSpanUs) return {};
  char text[256];
  std::snprintf(text, sizeof text,
                "measured: device busy %.1f µs of a %.1f µs span; the %.1f µs between tasks are host gaps (tasks "
                "launched one by one), not device time",
                chart.measuredBusyUs, chart.measuredSpanUs, idle);
  return text;
}

}  // namespace kiln
