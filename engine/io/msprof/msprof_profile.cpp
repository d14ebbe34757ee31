#include "io/msprof/msprof_profile.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <cmath>
#include <fstream>
#include <limits>
#include <set>

#include "util/json.h"
#include "util/load_error.h"

namespace kiln::msprof {
namespace fs = std::filesystem;
namespace {

bool startsWith(const std::string& s, std::string_view p) { return s.compare(0, p.size(), p) == 0; }

// The profiler's files in a folder, searched a few levels down (PROF_x/mindstudio_profiler_output/...,
// ASCEND_PROFILER_OUTPUT/...); the first of each kind in name order, so a rerun's later timestamp does not mix in.
struct ProfileFiles {
  std::string opSummary, taskTime, staticOpMem, trace;
};

ProfileFiles findFiles(const fs::path& dir) {
  std::vector<fs::path> found;
  std::error_code ec;
  std::function<void(const fs::path&, int)> walk = [&](const fs::path& d, int depth) {
    std::vector<fs::path> entries;
    for (fs::directory_iterator it(d, ec), end; !ec && it != end; it.increment(ec)) entries.push_back(it->path());
    std::sort(entries.begin(), entries.end());
    for (const fs::path& p : entries) {
      if (found.size() > 10000) return;
      if (fs::is_directory(p, ec)) {
        if (depth < 3) walk(p, depth + 1);
      } else if (p.extension() == ".csv" || (p.extension() == ".json" && startsWith(p.filename().string(), "msprof"))) {
        found.push_back(p);
      }
    }
  };
  walk(dir, 0);
  ProfileFiles f;
  for (const fs::path& p : found) {
    const std::string name = p.filename().string();
    if (f.opSummary.empty() && startsWith(name, "op_summary")) f.opSummary = p.string();
    if (f.taskTime.empty() && startsWith(name, "task_time")) f.taskTime = p.string();
    if (f.staticOpMem.empty() && startsWith(name, "static_op_mem")) f.staticOpMem = p.string();
    if (f.trace.empty() && p.extension() == ".json") f.trace = p.string();
  }
  return f;
}

// A shape list as msprof quotes it ("\"32,1024;1024\"" after CSV unquoting): the quotes dropped.
std::string unquote(std::string_view s) {
  while (!s.empty() && s.front() == '"') s.remove_prefix(1);
  while (!s.empty() && s.back() == '"') s.remove_suffix(1);
  return s == "N/A" ? std::string() : std::string(s);
}

struct TaskColumns {
  std::optional<size_t> name, type, taskType, stream, taskId, start, duration, wait, block, inShapes, inTypes,
      inFormats, outShapes, outTypes, outFormats, aicore, mac, mte2, scalar, aiv, vec, step;
};

// Tasks in start order, times from the first one.
void storeTasks(std::vector<std::pair<int64_t, MeasuredTask>>& read, MeasuredProfile& p) {
  std::stable_sort(read.begin(), read.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  const int64_t first = read.front().first;
  p.firstStartUs = first / 1000;
  for (auto& [start, task] : read) {
    task.startNs = start - first;
    p.tasks.push_back(std::move(task));
  }
}

void readTasks(const CsvTable& t, bool opSummary, MeasuredProfile& p) {
  TaskColumns c;
  if (opSummary) {
    c.name = t.column({"Op Name"});
    c.type = t.column({"OP Type"});
    c.taskType = t.column({"Task Type"});
    c.stream = t.column({"Stream ID"});
    c.taskId = t.column({"Task ID"});
    c.start = t.column({"Task Start Time"});
    c.duration = t.column({"Task Duration"});
    c.wait = t.column({"Task Wait Time"});
    c.block = t.column({"Block Dim", "Block Num"});
    c.inShapes = t.column({"Input Shapes"});
    c.inTypes = t.column({"Input Data Types"});
    c.inFormats = t.column({"Input Formats"});
    c.outShapes = t.column({"Output Shapes"});
    c.outTypes = t.column({"Output Data Types"});
    c.outFormats = t.column({"Output Formats"});
    c.aicore = t.column({"aicore_time"});
    c.mac = t.column({"aic_mac_time"});
    c.mte2 = t.column({"aic_mte2_time"});
    c.scalar = t.column({"aic_scalar_time"});
    c.aiv = t.column({"aiv_time"});
    c.vec = t.column({"aiv_vec_time"});
    c.step = t.column({"Step Id"});
  } else {  // task_time: kernel_name, kernel_type, stream_id, task_id, task_time, task_start
    c.name = t.column({"kernel_name"});
    c.taskType = t.column({"kernel_type"});
    c.stream = t.column({"stream_id"});
    c.taskId = t.column({"task_id"});
    c.start = t.column({"task_start"});
    c.duration = t.column({"task_time"});
  }
  std::string missing;
  for (auto [col, what] : {std::pair{c.name, opSummary ? "Op Name" : "kernel_name"},
                           std::pair{c.stream, opSummary ? "Stream ID" : "stream_id"},
                           std::pair{c.start, opSummary ? "Task Start Time(us)" : "task_start(us)"},
                           std::pair{c.duration, opSummary ? "Task Duration(us)" : "task_time(us)"}})
    if (!col) missing += (missing.empty() ? "" : ", ") + std::string(what);
  if (!missing.empty())
    throw LoadError(t.file(), "the header lacks " + missing + " (a task needs its name, stream, start and duration)");
  std::vector<std::pair<int64_t, MeasuredTask>> read;
  for (size_t r = 0; r < t.rows(); ++r) {
    MeasuredTask task;
    task.line = t.lineOf(r);
    task.name = std::string(t.field(r, *c.name));
    task.opType = c.type ? std::string(t.field(r, *c.type)) : task.name;
    task.taskType = c.taskType ? std::string(t.field(r, *c.taskType)) : std::string();
    const auto stream = t.integer(r, c.stream);
    const auto start = parseMicrosecondsToNs(t.field(r, *c.start));
    const auto duration = t.number(r, c.duration);
    if (!stream || !start || !duration || *duration < 0 || *duration > 1e12 || *stream < 0 || task.name.empty()) {
      if (p.skippedRows++ < 5)
        p.notes.push_back(t.file() + ": line " + std::to_string(task.line) + " skipped: " +
                          (task.name.empty() ? "no name"
                           : !stream         ? "no stream"
                           : !start          ? "no start time"
                                             : "no duration"));
      continue;
    }
    task.stream = *stream;
    task.taskId = t.integer(r, c.taskId);
    task.durationUs = *duration;
    task.waitUs = t.number(r, c.wait);
    task.blockDim = t.integer(r, c.block);
    if (c.inShapes) task.inputShapes = unquote(t.field(r, *c.inShapes));
    if (c.inTypes) task.inputTypes = unquote(t.field(r, *c.inTypes));
    if (c.inFormats) task.inputFormats = unquote(t.field(r, *c.inFormats));
    if (c.outShapes) task.outputShapes = unquote(t.field(r, *c.outShapes));
    if (c.outTypes) task.outputTypes = unquote(t.field(r, *c.outTypes));
    if (c.outFormats) task.outputFormats = unquote(t.field(r, *c.outFormats));
    // The pipeline breakdown: zeros mean "not sampled on this core" (an AI Core task's aiv columns).
    auto sampled = [&](std::optional<size_t> col) -> std::optional<double> {
      const auto v = t.number(r, col);
      return v && *v > 0 ? v : std::nullopt;
    };
    task.aicoreUs = sampled(c.aicore);
    task.macUs = sampled(c.mac);
    task.mte2Us = sampled(c.mte2);
    task.scalarUs = sampled(c.scalar);
    task.aivUs = sampled(c.aiv);
    task.vecUs = sampled(c.vec);
    task.step = t.integer(r, c.step);
    read.emplace_back(*start, std::move(task));
  }
  if (read.empty())
    throw LoadError(t.file(), t.rows() ? "no row holds a task (" + std::to_string(p.skippedRows) + " skipped)"
                                       : "no tasks: the header is all there is");
  storeTasks(read, p);
}

// msprof's Chrome trace (msprof_*.json), when a folder holds no task CSV: the "Ascend Hardware" process's complete
// events are the device tasks (thread = stream; args "Task Type", "Task Id", "Physic Stream Id"). The trace names no
// op types and no shapes: a task's type is its name, as task_time gives it.
void readTraceTasks(const std::string& file, const CsvLimits& limits, MeasuredProfile& p) {
  std::error_code ec;
  const uintmax_t bytes = fs::file_size(file, ec);
  constexpr uintmax_t kMaxTraceBytes = uintmax_t{1} << 30;
  if (ec) throw LoadError(file, "cannot read: " + ec.message());
  if (bytes > std::min<uintmax_t>(kMaxTraceBytes, limits.maxFileBytes))
    throw LoadError(file, "a trace of " + std::to_string(bytes) + " bytes is larger than Kiln reads");
  std::ifstream in(file, std::ios::binary);
  std::string text(static_cast<size_t>(bytes), '\0');
  if (!in.read(text.data(), static_cast<std::streamsize>(text.size()))) throw LoadError(file, "cannot read");
  Json j;
  try {
    j = Json::parse(text, 64);
  } catch (const std::exception& e) {
    throw LoadError(file, std::string("not JSON: ") + e.what());
  }
  const Json* events = j.isArray() ? &j : j.isObject() ? j.find("traceEvents") : nullptr;
  if (!events || !events->isArray())
    throw LoadError(file, "a trace is a list of events (or an object with a traceEvents list)");
  auto text_ = [](const Json& o, const char* key) {
    const Json* v = o.isObject() ? o.find(key) : nullptr;
    return v && v->isString() ? v->asString() : std::string();
  };
  auto number = [](const Json* v) -> std::optional<double> {
    if (!v) return std::nullopt;
    if (v->isNumber() && std::isfinite(v->asDouble())) return v->asDouble();
    return std::nullopt;
  };
  std::set<int64_t> hardware;
  for (const Json& e : events->asArray()) {
    if (text_(e, "ph") != "M" || text_(e, "name") != "process_name") continue;
    const Json* args = e.find("args");
    const auto pid = number(e.find("pid"));
    if (args && pid && text_(*args, "name") == "Ascend Hardware") hardware.insert(static_cast<int64_t>(*pid));
  }
  if (hardware.empty()) throw LoadError(file, "no \"Ascend Hardware\" process in the trace: no device tasks");
  std::vector<std::pair<int64_t, MeasuredTask>> read;
  for (const Json& e : events->asArray()) {
    if (text_(e, "ph") != "X") continue;
    const auto pid = number(e.find("pid"));
    if (!pid || !hardware.count(static_cast<int64_t>(*pid))) continue;
    MeasuredTask task;
    task.name = text_(e, "name");
    task.opType = task.name;
    const Json* args = e.find("args");
    const Json noArgs = Json::object();
    const Json& a = args && args->isObject() ? *args : noArgs;
    task.taskType = text_(a, "Task Type");
    const Json* ts = e.find("ts");
    std::optional<int64_t> start;
    if (ts && ts->isString()) start = parseMicrosecondsToNs(ts->asString());
    else if (const auto v = number(ts); v && *v >= 0 && *v < 9e15) start = static_cast<int64_t>(*v * 1000.0);
    const auto dur = number(e.find("dur"));
    auto stream = number(a.find("Physic Stream Id"));
    if (!stream) stream = number(e.find("tid"));
    if (task.name.empty() || !start || !dur || *dur < 0 || *dur > 1e12 || !stream || *stream < 0 || *stream > 1e9) {
      if (p.skippedRows++ < 5) p.notes.push_back(file + ": a hardware event without name, start, duration or stream skipped");
      continue;
    }
    task.stream = static_cast<int64_t>(*stream);
    if (const auto id = number(a.find("Task Id")); id && *id >= 0 && *id < 9e15) task.taskId = static_cast<int64_t>(*id);
    task.durationUs = *dur;
    read.emplace_back(*start, std::move(task));
  }
  if (read.empty()) throw LoadError(file, "the trace's Ascend Hardware process holds no task events");
  storeTasks(read, p);
}

void readStaticMemory(const CsvTable& t, MeasuredProfile& p) {
  const auto name = t.column({"Op Name"}), graph = t.column({"Model Name", "Graph ID"}), size = t.column({"Size"});
  const auto start = t.column({"Node Index Start"}), end = t.column({"Node Index End"});
  if (!name || !size) throw LoadError(t.file(), "the header lacks Op Name or Size(KB)");
  for (size_t r = 0; r < t.rows(); ++r) {
    const std::string op(t.field(r, *name));
    const auto kb = t.number(r, size);
    if (!kb || *kb < 0 || *kb > 1e12) {
      ++p.skippedRows;
      continue;
    }
    const auto bytes = static_cast<int64_t>(*kb * 1024);
    if (op == "TOTAL") {
      p.staticMemoryTotalBytes = bytes;
      continue;
    }
    StaticOpMemory m;
    m.opName = op;
    if (graph) m.graph = std::string(t.field(r, *graph));
    m.bytes = bytes;
    m.nodeStart = t.integer(r, start).value_or(0);
    const auto e = t.integer(r, end);
    m.nodeEnd = !e || *e >= 4294967295LL ? -1 : *e;
    p.staticMemory.push_back(std::move(m));
  }
}

bool headerNamesTasks(const std::string& path) {
  try {
    CsvLimits small;
    small.maxFileBytes = uint64_t{2} << 30;
    small.maxRows = 1;
    // Only the first line matters: read a bounded prefix.
    std::string text;
    if (FILE* f = std::fopen(path.c_str(), "rb")) {
      text.resize(65536);
      text.resize(std::fread(text.data(), 1, text.size(), f));
      std::fclose(f);
    }
    const size_t nl = text.find('\n');
    const CsvTable t = CsvTable::parse(nl == std::string::npos ? text : text.substr(0, nl), path, small);
    return (t.column({"Op Name"}) && t.column({"Task Duration"})) || (t.column({"kernel_name"}) && t.column({"task_time"}));
  } catch (const LoadError&) {
    return false;
  }
}

}  // namespace

std::optional<int64_t> parseMicrosecondsToNs(std::string_view s) {
  while (!s.empty() && (s.back() == '\t' || s.back() == ' ' || s.back() == '\r')) s.remove_suffix(1);
  while (!s.empty() && (s.front() == ' ' || s.front() == '"')) s.remove_prefix(1);
  while (!s.empty() && s.back() == '"') s.remove_suffix(1);
  const size_t dot = s.find('.');
  const std::string_view whole = s.substr(0, dot);
  if (whole.empty() || whole.size() > 16) return std::nullopt;
  int64_t us = 0;
  if (auto [end, ec] = std::from_chars(whole.data(), whole.data() + whole.size(), us);
      ec != std::errc() || end != whole.data() + whole.size() || us < 0 || us > 9'000'000'000'000'000)
    return std::nullopt;  // nanoseconds must fit an int64
  int64_t ns = 0;
  if (dot != std::string_view::npos) {
    const std::string_view frac = s.substr(dot + 1);
    if (frac.empty()) return std::nullopt;
    int64_t scale = 100;
    for (char c : frac) {
      if (c < '0' || c > '9') return std::nullopt;
      if (scale > 0) ns += (c - '0') * scale;
      scale /= 10;
    }
  }
  return us * 1000 + ns;
}

bool looksLikeMsprofTrace(std::string_view head) {
  return head.find("\"ph\"") != std::string_view::npos && head.find("\"Ascend Hardware\"") != std::string_view::npos;
}

bool isMeasuredProfile(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    const ProfileFiles f = findFiles(path);
    return !f.opSummary.empty() || !f.taskTime.empty() || !f.trace.empty();
  }
  if (fs::path(path).extension() == ".json" && fs::is_regular_file(path, ec)) {
    std::ifstream in(path, std::ios::binary);
    std::string head(64 * 1024, '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<size_t>(in.gcount()));
    return looksLikeMsprofTrace(head);
  }
  return fs::path(path).extension() == ".csv" && headerNamesTasks(path);
}

MeasuredProfile readMeasuredProfile(const std::string& path, const CsvLimits& limits) {
  MeasuredProfile p;
  p.source = path;
  std::error_code ec;
  ProfileFiles files;
  if (fs::is_directory(path, ec)) {
    files = findFiles(path);
    if (files.opSummary.empty() && files.taskTime.empty() && files.trace.empty())
      throw LoadError(path, "no op_summary*.csv, task_time*.csv or msprof*.json in it or its subfolders (3 levels): "
                            "not a profile");
    if (files.opSummary.empty() && files.taskTime.empty()) {
      p.tasksFile = files.trace;
      readTraceTasks(files.trace, limits, p);
      p.notes.push_back("no op_summary or task_time: tasks from the trace " + files.trace + " (no op types, no shapes)");
      if (!files.staticOpMem.empty()) readStaticMemory(CsvTable::read(files.staticOpMem, limits), p);
      return p;
    }
  } else if (fs::path(path).extension() == ".json") {
    p.tasksFile = path;
    readTraceTasks(path, limits, p);
    return p;
  } else {
    const std::string name = fs::path(path).filename().string();
    (startsWith(name, "task_time") ? files.taskTime : files.opSummary) = path;
  }
  p.tasksFile = files.opSummary.empty() ? files.taskTime : files.opSummary;
  const CsvTable table = CsvTable::read(p.tasksFile, limits);
  // A CSV given by itself is told by its header: op_summary names "Op Name", task_time "kernel_name".
  const bool opSummary = table.column({"Op Name"}) || !table.column({"kernel_name"});
  readTasks(table, opSummary, p);
  if (!opSummary) p.notes.push_back("no op_summary: tasks from " + files.taskTime + " (kernel names only)");
  if (!files.staticOpMem.empty()) readStaticMemory(CsvTable::read(files.staticOpMem, limits), p);
  return p;
}

}  // namespace kiln::msprof
