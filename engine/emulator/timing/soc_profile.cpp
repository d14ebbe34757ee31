#include "emulator/timing/soc_profile.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "util/json.h"

namespace kiln {

namespace {

constexpr size_t kMaxProfileBytes = 1 << 20;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

// "op_calibration": {"MatMulV2": {"setup_us": 4.1, "work_scale": 1.3, "tasks": 20, "basis": "..."}, ...}
void readCalibration(const Json& cal, const std::string& source, SocProfile& p) {
  if (!cal.isObject()) throw std::runtime_error(source + ": 'op_calibration' must be an object of op types");
  if (cal.asObject().size() > 10000) throw std::runtime_error(source + ": 'op_calibration' has too many op types");
  for (const auto& [type, entry] : cal.asObject()) {
    const std::string where = source + ": op_calibration '" + type + "'";
    if (type.empty() || type.size() > 256) throw std::runtime_error(source + ": op_calibration has a bad op type name");
    if (!entry.isObject()) throw std::runtime_error(where + " must be an object");
    OpCalibration c;
    for (const auto& [key, v] : entry.asObject()) {
      if (key == "basis") {
        if (!v.isString()) throw std::runtime_error(where + ": 'basis' must be a string");
        c.basis = v.asString();
        continue;
      }
      if (key != "setup_us" && key != "work_scale" && key != "tasks")
        throw std::runtime_error(where + ": unknown field '" + key + "'");
      if (!v.isNumber() || !std::isfinite(v.asDouble()))
        throw std::runtime_error(where + ": '" + key + "' must be a number");
      const double d = v.asDouble();
      if (key == "setup_us") {
        if (d < 0 || d > 1e6) throw std::runtime_error(where + ": 'setup_us' must be in [0, 1e6]");
        c.setupUs = d;
      } else if (key == "work_scale") {
        if (d <= 0 || d > 1e6) throw std::runtime_error(where + ": 'work_scale' must be in (0, 1e6]");
        c.workScale = d;
      } else {
        if (d < 0 || d > 1e12 || d != static_cast<double>(static_cast<int64_t>(d)))
          throw std::runtime_error(where + ": 'tasks' must be a whole number");
        c.tasks = static_cast<int64_t>(d);
      }
    }
    p.opCalibration[type] = std::move(c);
  }
}

}  // namespace

SocProfile SocProfile::fromJsonText(const std::string& text, const std::string& source) {
  Json j;
  try {
    j = Json::parse(text);
  } catch (const std::exception& e) {
    throw std::runtime_error(source + ": not valid JSON: " + e.what());
  }
  if (!j.isObject()) throw std::runtime_error(source + ": a SoC profile is a JSON object");
  SocProfile p;
  auto number = [&](const char* key, double& field, double lo, double hi) {
    const Json* v = j.find(key);
    if (!v) return;
    if (!v->isNumber() || v->asDouble() < lo || v->asDouble() > hi)
      throw std::runtime_error(source + ": '" + key + "' must be a number in [" + std::to_string(lo) + ", " +
                               std::to_string(hi) + "]");
    field = v->asDouble();
  };
  auto integer = [&](const char* key, int& field, int lo, int hi) {
    double d = field;
    number(key, d, lo, hi);
    if (d != static_cast<int>(d)) throw std::runtime_error(source + ": '" + key + "' must be a whole number");
    field = static_cast<int>(d);
  };
  static const std::vector<std::string> known = {
      "name", "notes", "ai_cores", "vector_cores", "clock_ghz", "cube_fp16_macs_per_cycle",
      "cube_int8_macs_per_cycle", "cube_fp32_macs_per_cycle", "vector_fp16_lanes_per_cycle",
      "vector_fp32_lanes_per_cycle", "ub_bytes", "l1_bytes", "l2_bytes", "hbm_gbps", "aicpu_cores", "aicpu_gflops",
      "aicpu_task_us", "kernel_task_us", "event_us", "memcpy_gbps", "dma_engines", "host_launch_us",
      "op_calibration"};
  for (const auto& [key, value] : j.asObject())
    if (std::find(known.begin(), known.end(), key) == known.end())
      throw std::runtime_error(source + ": unknown field '" + key + "'");
  for (const char* key : {"name", "notes"})
    if (const Json* v = j.find(key); v && !v->isString())
      throw std::runtime_error(source + ": '" + key + "' must be a string, not " + v->dump());
  if (const Json* v = j.find("name")) p.name = v->asString();
  if (p.name.empty()) throw std::runtime_error(source + ": 'name' is required");
  if (const Json* v = j.find("notes")) p.notes = v->asString();
  integer("ai_cores", p.aiCores, 1, 4096);
  integer("vector_cores", p.vectorCores, 0, 4096);
  number("clock_ghz", p.clockGhz, 0.01, 100);
  number("cube_fp16_macs_per_cycle", p.cubeFp16MacsPerCycle, 1, 1e7);
  number("cube_int8_macs_per_cycle", p.cubeInt8MacsPerCycle, 1, 1e7);
  number("cube_fp32_macs_per_cycle", p.cubeFp32MacsPerCycle, 1, 1e7);
  number("vector_fp16_lanes_per_cycle", p.vectorFp16LanesPerCycle, 1, 1e6);
  number("vector_fp32_lanes_per_cycle", p.vectorFp32LanesPerCycle, 1, 1e6);
  number("ub_bytes", p.ubBytes, 1024, 1e12);
  number("l1_bytes", p.l1Bytes, 1024, 1e12);
  number("l2_bytes", p.l2Bytes, 0, 1e13);
  number("hbm_gbps", p.hbmGBps, 0.001, 1e6);
  integer("aicpu_cores", p.aiCpuCores, 1, 1024);
  number("aicpu_gflops", p.aiCpuGflops, 0.001, 1e6);
  number("aicpu_task_us", p.aiCpuTaskUs, 0, 1e6);
  number("kernel_task_us", p.kernelTaskUs, 0, 1e6);
  number("event_us", p.eventUs, 0, 1e6);
  number("memcpy_gbps", p.memcpyGBps, 0.001, 1e6);
  integer("dma_engines", p.dmaEngines, 1, 1024);
  number("host_launch_us", p.hostLaunchUs, 0, 1e6);
  if (const Json* cal = j.find("op_calibration")) readCalibration(*cal, source, p);
  return p;
}

std::string SocProfile::toJsonText() const {
  Json j = Json::object();
  j.set("name", name);
  if (!notes.empty()) j.set("notes", notes);
  j.set("ai_cores", aiCores);
  j.set("vector_cores", vectorCores);
  j.set("clock_ghz", clockGhz);
  j.set("cube_fp16_macs_per_cycle", cubeFp16MacsPerCycle);
  j.set("cube_int8_macs_per_cycle", cubeInt8MacsPerCycle);
  j.set("cube_fp32_macs_per_cycle", cubeFp32MacsPerCycle);
  j.set("vector_fp16_lanes_per_cycle", vectorFp16LanesPerCycle);
  j.set("vector_fp32_lanes_per_cycle", vectorFp32LanesPerCycle);
  j.set("ub_bytes", ubBytes);
  j.set("l1_bytes", l1Bytes);
  j.set("l2_bytes", l2Bytes);
  j.set("hbm_gbps", hbmGBps);
  j.set("aicpu_cores", aiCpuCores);
  j.set("aicpu_gflops", aiCpuGflops);
  j.set("aicpu_task_us", aiCpuTaskUs);
  j.set("kernel_task_us", kernelTaskUs);
  j.set("event_us", eventUs);
  j.set("memcpy_gbps", memcpyGBps);
  j.set("dma_engines", dmaEngines);
  j.set("host_launch_us", hostLaunchUs);
  if (!opCalibration.empty()) {
    Json cal = Json::object();
    for (const auto& [type, c] : opCalibration) {
      Json o = Json::object();
      o.set("setup_us", c.setupUs);
      o.set("work_scale", c.workScale);
      o.set("tasks", c.tasks);
      if (!c.basis.empty()) o.set("basis", c.basis);
      cal.set(type, std::move(o));
    }
    j.set("op_calibration", std::move(cal));
  }
  return j.dump(2) + "\n";
}

SocProfile SocProfile::fromFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open");
  std::string text(kMaxProfileBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxProfileBytes) throw std::runtime_error(path + ": larger than a SoC profile can be");
  return fromJsonText(text, path);
}

std::vector<std::string> SocProfile::searchPath() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("KILN_SOC_DIR"); env && *env) dirs.push_back(env);
  // Installed next to the binary (bin/kiln, share/kiln/soc): right for any install prefix and for the .deb, whose
  // prefix is not the one the build was configured with.
  std::error_code ec;
  if (const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec); !ec)
    dirs.push_back((exe.parent_path().parent_path() / "share" / "kiln" / "soc").string());
#ifdef KILN_SOC_INSTALL_DIR
  dirs.push_back(KILN_SOC_INSTALL_DIR);
#endif
#ifdef KILN_SOC_SOURCE_DIR
  dirs.push_back(KILN_SOC_SOURCE_DIR);
#endif
  return dirs;
}

std::vector<std::string> SocProfile::availableNames() {
  std::vector<std::string> names;
  for (const std::string& dir : searchPath()) {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec))
      if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

SocProfile SocProfile::load(const std::string& nameOrPath) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (nameOrPath.find('/') != std::string::npos || nameOrPath.ends_with(".json")) return fromFile(nameOrPath);
  for (const std::string& dir : searchPath()) {
    const fs::path f = fs::path(dir) / (lower(nameOrPath) + ".json");
    if (fs::is_regular_file(f, ec)) return fromFile(f.string());
  }
  std::string known;
  for (const std::string& n : availableNames()) known += (known.empty() ? "" : ", ") + n;
  throw std::runtime_error("no SoC profile '" + nameOrPath + "' (known: " + (known.empty() ? "none found" : known) +
                           "; set KILN_SOC_DIR or give a .json path)");
}

}  // namespace kiln
