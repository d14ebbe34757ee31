#include "report/chrome_trace.h"

#include <fstream>
#include <map>
#include <set>
#include <stdexcept>

#include "util/json.h"

namespace kiln {

namespace {

constexpr int kStreamsPid = 1;
constexpr int kUnitsPid = 2;

Json meta(const char* what, int pid, int tid, const std::string& name) {
  Json e = Json::object();
  e.set("ph", "M");
  e.set("name", what);
  e.set("pid", pid);
  e.set("tid", tid);
  Json args = Json::object();
  args.set("name", name);
  e.set("args", std::move(args));
  return e;
}

std::string taskName(const TimelineChartTask& t) {
  const std::string node = t.nodeName.empty() ? t.opType : t.nodeName;
  if (t.type == "KERNEL" && !node.empty()) return node;
  return node.empty() ? t.type : t.type + " " + node;
}

}  // namespace

std::string chromeTraceJson(const TimelineChart& chart, const std::string& title) {
  Json events = Json::array();
  events.push(meta("process_name", kStreamsPid, 0, title + ": streams"));
  events.push(meta("process_name", kUnitsPid, 0, title + ": units"));
  std::set<int> streams;
  std::map<std::string, int> unitTrack;  // unit name -> tid, in first-seen order
  for (const TimelineChartTask& t : chart.tasks) {
    streams.insert(t.stream);
    if (t.unit != "stream") unitTrack.emplace(t.unit, static_cast<int>(unitTrack.size()));
  }
  for (int s : streams) events.push(meta("thread_name", kStreamsPid, s, "stream " + std::to_string(s)));
  for (const auto& [unit, tid] : unitTrack) events.push(meta("thread_name", kUnitsPid, tid, unit));
  for (const TimelineChartTask& t : chart.tasks) {
    Json args = Json::object();
    if (t.nodeId) {
      args.set("node", t.nodeName);
      args.set("op", t.opType);
      if (!t.shapes.empty()) args.set("shapes", t.shapes);
    }
    args.set("task", t.type);
    args.set("stream", t.stream);
    args.set("unit", t.unit);
    if (t.cores) args.set("cores", t.cores);
    args.set("flops", t.flops);
    args.set("bytes", t.bytes);
    if (t.unit != "stream") args.set("bound", t.costUnknown ? "unknown" : t.memoryBound ? "memory" : "compute");
    if (t.critical) args.set("critical_path", true);
    for (int pid : {kStreamsPid, kUnitsPid}) {
      if (pid == kUnitsPid && t.unit == "stream") continue;
      Json x = Json::object();
      x.set("ph", "X");
      x.set("name", taskName(t));
      x.set("cat", t.unit);
      x.set("pid", pid);
      x.set("tid", pid == kStreamsPid ? t.stream : unitTrack.at(t.unit));
      x.set("ts", t.startUs);
      x.set("dur", t.endUs - t.startUs);
      x.set("args", args);
      events.push(std::move(x));
    }
  }
  // Flow arrows from each EVENT_RECORD to the waits on that event, on the stream tracks.
  for (const TimelineChartTask& t : chart.tasks) {
    const bool record = t.type == "EVENT_RECORD", wait = t.type == "EVENT_WAIT";
    if ((!record && !wait) || t.event < 0) continue;
    Json f = Json::object();
    f.set("ph", record ? "s" : "f");
    if (wait) f.set("bp", "e");
    f.set("name", "event " + std::to_string(t.event));
    f.set("cat", "event");
    f.set("id", t.event);
    f.set("pid", kStreamsPid);
    f.set("tid", t.stream);
    f.set("ts", t.startUs);
    events.push(std::move(f));
  }
  Json root = Json::object();
  root.set("traceEvents", std::move(events));
  root.set("displayTimeUnit", "ns");
  Json info = Json::object();
  info.set("latency_us", chart.latencyUs);
  info.set("source", chart.source);
  root.set("metadata", std::move(info));
  return root.dump();
}

void writeChromeTrace(const TimelineChart& chart, const std::string& title, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error(path + ": cannot write");
  out << chromeTraceJson(chart, title);
  if (!out.flush()) throw std::runtime_error(path + ": write failed");
}

}  // namespace kiln
