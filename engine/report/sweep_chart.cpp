#include "report/sweep_chart.h"

#include <stdexcept>

#include "util/json_fields.h"
#include "util/units.h"

namespace kiln {

Json sweepChartToJson(const SweepChart& c) {
  Json points = Json::array();
  for (const SweepPoint& p : c.points) {
    Json j = Json::object();
    j.set("value", p.value);
    j.set("binding", p.binding);
    j.set("ok", p.ok);
    if (!p.ok) {
      j.set("error", p.error);
    } else {
      j.set("arena_bytes", p.arenaBytes);
      j.set("lower_bound_bytes", p.lowerBoundBytes);
      j.set("no_reuse_bytes", p.noReuseBytes);
      j.set("io_bytes", p.ioBytes);
      j.set("weight_bytes", p.weightBytes);
      j.set("nodes", p.nodes);
      j.set("unsized_tensors", p.unsizedTensors);
      j.set("latency_us", p.latencyUs);
    }
    points.push(std::move(j));
  }
  Json j = Json::object();
  j.set("model", c.model);
  j.set("symbol", c.symbol);
  j.set("points", std::move(points));
  return j;
}

SweepChart sweepChartFromJson(const Json& j) {
  jsonObject(j, "'sweep'");
  SweepChart c;
  c.model = jsonString(j, "model");
  c.symbol = jsonString(j, "symbol");
  const Json* points = j.find("points");
  if (!points || !points->isArray()) throw std::invalid_argument("'sweep.points': expected an array");
  for (const Json& e : points->asArray()) {
    jsonObject(e, "'sweep.points[]'");
    SweepPoint p;
    p.value = jsonCount(e, "value");
    p.binding = jsonString(e, "binding");
    p.ok = jsonBool(e, "ok");
    p.error = jsonString(e, "error");
    p.arenaBytes = jsonCount(e, "arena_bytes");
    p.lowerBoundBytes = jsonCount(e, "lower_bound_bytes");
    p.noReuseBytes = jsonCount(e, "no_reuse_bytes");
    p.ioBytes = jsonCount(e, "io_bytes");
    p.weightBytes = jsonCount(e, "weight_bytes");
    p.nodes = jsonCount(e, "nodes");
    p.unsizedTensors = jsonCount(e, "unsized_tensors");
    p.latencyUs = jsonNumber(e, "latency_us", 0, 0);
    c.points.push_back(std::move(p));
  }
  return c;
}

std::string sweepTable(const SweepChart& c) {
  char line[256];
  std::snprintf(line, sizeof line, "%-14s %12s %12s %12s %12s %14s %8s  %s\n", c.symbol.c_str(), "arena",
                "lower bound", "no reuse", "graph I/O", "latency", "nodes", "shapes");
  std::string out = line;
  for (const SweepPoint& p : c.points) {
    if (!p.ok) {
      std::snprintf(line, sizeof line, "%-14lld failed: %s\n", static_cast<long long>(p.value), p.error.c_str());
      out += line;
      continue;
    }
    std::snprintf(line, sizeof line, "%-14lld %12s %12s %12s %12s %14s %8lld  %s%s\n", static_cast<long long>(p.value),
                  formatBytes(double(p.arenaBytes)).c_str(), formatBytes(double(p.lowerBoundBytes)).c_str(),
                  formatBytes(double(p.noReuseBytes)).c_str(), formatBytes(double(p.ioBytes)).c_str(),
                  formatDuration(p.latencyUs / 1e6).c_str(),
                  static_cast<long long>(p.nodes), p.binding.c_str(),
                  p.unsizedTensors ? (" (" + std::to_string(p.unsizedTensors) + " tensors unsized)").c_str() : "");
    out += line;
  }
  return out;
}

}  // namespace kiln
