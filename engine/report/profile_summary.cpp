#include "report/profile_summary.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "io/msprof/msprof_profile.h"
#include "util/units.h"

namespace kiln {
namespace {

struct OpTypeStats {
  std::string taskType;
  int64_t tasks = 0;
  double total = 0, min = 0, max = 0;
};

struct StreamStats {
  int64_t tasks = 0;
  double busyUs = 0;
};

struct Digest {
  std::map<std::string, OpTypeStats> byType;
  std::map<int64_t, StreamStats> byStream;
  std::vector<const msprof::MeasuredTask*> longest;
  double spanUs = 0, busyUs = 0, idleUs = 0;
};

// Device idle time: the span minus the union of the task intervals (tasks on several streams may overlap).
Digest digest(const msprof::MeasuredProfile& p) {
  Digest d;
  std::vector<std::pair<double, double>> spans;
  for (const msprof::MeasuredTask& t : p.tasks) {
    OpTypeStats& s = d.byType[t.opType];
    if (s.tasks == 0) {
      s.taskType = t.taskType;
      s.min = s.max = t.durationUs;
    }
    ++s.tasks;
    s.total += t.durationUs;
    s.min = std::min(s.min, t.durationUs);
    s.max = std::max(s.max, t.durationUs);
    StreamStats& st = d.byStream[t.stream];
    ++st.tasks;
    st.busyUs += t.durationUs;
    const double start = static_cast<double>(t.startNs) / 1000.0;
    spans.emplace_back(start, start + t.durationUs);
    d.longest.push_back(&t);
  }
  std::sort(spans.begin(), spans.end());
  double end = 0;
  for (const auto& [a, b] : spans) {
    if (a > end) d.idleUs += a - end;
    d.busyUs += std::max(0.0, b - std::max(a, end));
    end = std::max(end, b);
  }
  d.spanUs = end;
  std::stable_sort(d.longest.begin(), d.longest.end(),
                   [](const auto* a, const auto* b) { return a->durationUs > b->durationUs; });
  if (d.longest.size() > 10) d.longest.resize(10);
  return d;
}

std::string us(double v) {
  char b[32];
  std::snprintf(b, sizeof b, v >= 100 ? "%.0f" : "%.2f", v);
  return std::string(b) + " µs";
}

}  // namespace

Json profileSummaryJson(const msprof::MeasuredProfile& p) {
  const Digest d = digest(p);
  Json j = Json::object();
  j.set("source", p.source);
  j.set("tasks_file", p.tasksFile);
  j.set("tasks", static_cast<int64_t>(p.tasks.size()));
  j.set("skipped_rows", static_cast<int64_t>(p.skippedRows));
  j.set("span_us", d.spanUs);
  j.set("device_busy_us", d.busyUs);
  j.set("idle_us", d.idleUs);
  Json streams = Json::array();
  for (const auto& [id, s] : d.byStream) {
    Json o = Json::object();
    o.set("stream", id);
    o.set("tasks", s.tasks);
    o.set("busy_us", s.busyUs);
    streams.push(std::move(o));
  }
  j.set("streams", std::move(streams));
  Json types = Json::array();
  std::vector<std::pair<std::string, OpTypeStats>> sorted(d.byType.begin(), d.byType.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second.total > b.second.total; });
  for (const auto& [type, s] : sorted) {
    Json o = Json::object();
    o.set("op_type", type);
    o.set("task_type", s.taskType);
    o.set("tasks", s.tasks);
    o.set("total_us", s.total);
    o.set("min_us", s.min);
    o.set("avg_us", s.total / static_cast<double>(s.tasks));
    o.set("max_us", s.max);
    types.push(std::move(o));
  }
  j.set("op_types", std::move(types));
  Json longest = Json::array();
  for (const msprof::MeasuredTask* t : d.longest) {
    Json o = Json::object();
    o.set("name", t->name);
    o.set("op_type", t->opType);
    o.set("stream", t->stream);
    o.set("start_us", static_cast<double>(t->startNs) / 1000.0);
    o.set("duration_us", t->durationUs);
    if (t->blockDim) o.set("block_dim", *t->blockDim);
    if (!t->inputShapes.empty()) o.set("input_shapes", t->inputShapes);
    longest.push(std::move(o));
  }
  j.set("longest", std::move(longest));
  if (!p.staticMemory.empty() || p.staticMemoryTotalBytes) {
    Json m = Json::object();
    m.set("ops", static_cast<int64_t>(p.staticMemory.size()));
    if (p.staticMemoryTotalBytes) m.set("total_bytes", *p.staticMemoryTotalBytes);
    j.set("static_memory", std::move(m));
  }
  Json notes = Json::array();
  for (const std::string& n : p.notes) notes.push(n);
  j.set("notes", std::move(notes));
  return j;
}

std::string profileSummaryText(const msprof::MeasuredProfile& p) {
  const Digest d = digest(p);
  std::string s = "Profile     " + p.source + "\n";
  s += "Tasks       " + std::to_string(p.tasks.size()) + " from " + p.tasksFile +
       (p.skippedRows ? " (" + std::to_string(p.skippedRows) + " rows skipped)" : "") + "\n";
  s += "Span        " + us(d.spanUs) + ": device busy " + us(d.busyUs) + ", idle between tasks " + us(d.idleUs);
  if (d.spanUs > 0 && d.idleUs > d.busyUs)
    s += " (mostly idle: tasks launched one by one by the host, not device time)";
  s += "\n\nStreams\n";
  for (const auto& [id, st] : d.byStream)
    s += "  stream " + std::to_string(id) + "  " + std::to_string(st.tasks) + (st.tasks == 1 ? " task, busy " : " tasks, busy ") + us(st.busyUs) + "\n";
  s += "\nOp type                   task type         tasks       total         min         avg         max\n";
  std::vector<std::pair<std::string, OpTypeStats>> sorted(d.byType.begin(), d.byType.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second.total > b.second.total; });
  for (const auto& [type, st] : sorted) {
    char line[512];
    std::snprintf(line, sizeof line, "  %-22.22s  %-16.16s%7lld %11s %11s %11s %11s\n", type.c_str(), st.taskType.c_str(),
                  static_cast<long long>(st.tasks), us(st.total).c_str(), us(st.min).c_str(),
                  us(st.total / static_cast<double>(st.tasks)).c_str(), us(st.max).c_str());
    s += line;
  }
  s += "\nLongest tasks\n";
  for (const msprof::MeasuredTask* t : d.longest)
    s += "  " + us(t->durationUs) + "  " + t->opType + "  " + t->name + "  stream " + std::to_string(t->stream) +
         (t->inputShapes.empty() ? "" : "  in " + t->inputShapes) + "\n";
  if (p.staticMemoryTotalBytes || !p.staticMemory.empty())
    s += "\nStatic op memory: " + std::to_string(p.staticMemory.size()) + " ops" +
         (p.staticMemoryTotalBytes ? ", total " + formatBytes(static_cast<double>(*p.staticMemoryTotalBytes)) : "") + "\n";
  for (const std::string& n : p.notes) s += "note: " + n + "\n";
  return s;
}

}  // namespace kiln
