#include "emulator/timing/chrome_trace.h"

#include <fstream>
#include <set>
#include <stdexcept>

#include "ir/graph.h"
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

std::string taskName(const TimelineEntry& e) {
  if (e.node && e.type == TaskType::Kernel) return e.node->name().empty() ? e.node->qualifiedType() : e.node->name();
  std::string s = taskTypeName(e.type);
  if (e.node) s += " " + (e.node->name().empty() ? e.node->qualifiedType() : e.node->name());
  return s;
}

}  // namespace

std::string chromeTraceJson(const Timeline& tl, const std::string& title) {
  Json events = Json::array();
  events.push(meta("process_name", kStreamsPid, 0, title + ": streams"));
  events.push(meta("process_name", kUnitsPid, 0, title + ": units"));
  std::set<int> streams;
  std::set<SimUnit> units;
  for (const TimelineEntry& e : tl.entries) {
    streams.insert(e.stream);
    if (e.unit != SimUnit::Stream) units.insert(e.unit);
  }
  for (int s : streams) events.push(meta("thread_name", kStreamsPid, s, "stream " + std::to_string(s)));
  for (SimUnit u : units) events.push(meta("thread_name", kUnitsPid, static_cast<int>(u), std::string(simUnitName(u))));
  for (const TimelineEntry& e : tl.entries) {
    Json args = Json::object();
    if (e.node) {
      args.set("node", e.node->name());
      args.set("op", e.node->qualifiedType());
    }
    args.set("task", std::string(taskTypeName(e.type)));
    args.set("stream", e.stream);
    args.set("unit", std::string(simUnitName(e.unit)));
    if (e.cores) args.set("cores", e.cores);
    args.set("flops", e.flops);
    args.set("bytes", e.bytes);
    if (e.unit != SimUnit::Stream) args.set("bound", e.memoryBound ? "memory" : "compute");
    if (e.critical) args.set("critical_path", true);
    for (int pid : {kStreamsPid, kUnitsPid}) {
      if (pid == kUnitsPid && e.unit == SimUnit::Stream) continue;
      Json x = Json::object();
      x.set("ph", "X");
      x.set("name", taskName(e));
      x.set("cat", std::string(simUnitName(e.unit)));
      x.set("pid", pid);
      x.set("tid", pid == kStreamsPid ? e.stream : static_cast<int>(e.unit));
      x.set("ts", e.startUs);
      x.set("dur", e.endUs - e.startUs);
      x.set("args", args);
      events.push(std::move(x));
    }
  }
  // Flow arrows from each EVENT_RECORD to the waits on that event, on the stream tracks.
  for (const TimelineEntry& e : tl.entries) {
    if ((e.type != TaskType::EventRecord && e.type != TaskType::EventWait) || e.event < 0) continue;
    Json f = Json::object();
    f.set("ph", e.type == TaskType::EventRecord ? "s" : "f");
    if (e.type == TaskType::EventWait) f.set("bp", "e");
    f.set("name", "event " + std::to_string(e.event));
    f.set("cat", "event");
    f.set("id", e.event);
    f.set("pid", kStreamsPid);
    f.set("tid", e.stream);
    f.set("ts", e.type == TaskType::EventRecord ? e.startUs : e.startUs);
    events.push(std::move(f));
  }
  Json root = Json::object();
  root.set("traceEvents", std::move(events));
  root.set("displayTimeUnit", "ns");
  Json meta = Json::object();
  meta.set("latency_us", tl.latencyUs);
  meta.set("host_launches", tl.hostLaunches);
  root.set("metadata", std::move(meta));
  return root.dump();
}

void writeChromeTrace(const Timeline& timeline, const std::string& title, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error(path + ": cannot write");
  out << chromeTraceJson(timeline, title);
  if (!out.flush()) throw std::runtime_error(path + ": write failed");
}

}  // namespace kiln
