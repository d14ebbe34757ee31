#include "report/memory_chart.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>

#include "ir/graph.h"
#include "memory/lifetimes.h"
#include "memory/memory_plan.h"
#include "memory/planned_offsets.h"

namespace kiln {

namespace {

int streamOf(const Node& n) {
  const std::string s = n.annotation("stream");
  int v = -1;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && ptr == s.data() + s.size() && v >= 0 ? v : -1;
}

}  // namespace

MemoryChart buildMemoryChart(const Graph& g, const std::string& replanWith) {
  MemoryChart chart;
  for (const Node* n : g.nodes())
    if (n->annotations().count("mem.out")) chart.planned = true;
  if (!chart.planned) return chart;

  const memory::Lifetimes life = memory::computeLifetimes(g);
  const std::vector<memory::Buffer> aligned = memory::alignedBlocks(life);
  chart.unsized = life.unsized;
  chart.unsizedSymbols = life.unsizedSymbols;
  chart.stepNodes.reserve(life.order.size());
  for (const Node* n : life.order) chart.stepNodes.push_back(n->id());

  // An arena block's offset is the one recorded for its tensors (memory/planned_offsets.h). Replanning gives every
  // block its offset from the new plan.
  std::vector<std::optional<int64_t>> blockOffset =
      replanWith.empty() ? memory::plannedBlockOffsets(life) : std::vector<std::optional<int64_t>>(life.blocks.size());
  if (!replanWith.empty()) {
    const memory::Plan plan = memory::planMemory(aligned, replanWith, memory::kArenaAlignment);
    for (size_t i = 0; i < plan.offset.size() && i < blockOffset.size(); ++i) blockOffset[i] = plan.offset[i];
    chart.replannedWith = plan.planner;
    chart.planDetail = plan.detail;
  }
  std::map<int64_t, int> reuseOf;
  for (const memory::TensorLifetime& t : life.tensors) {
    if (t.kind != memory::TensorKind::Arena || t.block < 0) continue;
    const Node* producer = t.value->producer();
    const std::optional<int64_t>& known = blockOffset[size_t(t.block)];
    if (!known) {
      ++chart.unplaced;
      continue;
    }
    MemoryChartBlock b;
    b.valueId = t.value->id();
    b.name = t.value->name();
    b.producerId = producer ? producer->id() : 0;
    b.producerOp = producer ? producer->qualifiedType() : std::string();
    b.stream = producer ? streamOf(*producer) : -1;
    b.first = t.first;
    b.end = t.end;
    b.offset = *known;
    b.bytes = t.bytes;
    b.arenaBlock = t.block;
    b.reuseBlock = reuseOf.emplace(*known, int(reuseOf.size())).first->second;
    chart.blocks.push_back(std::move(b));
  }
  chart.reuseBlocks = int(reuseOf.size());

  // Live bytes per step from the aligned blocks (an alias adds nothing: its block is counted once), by a difference
  // array over the steps. Its maximum is memory::lowerBound of the same blocks.
  const size_t steps = life.order.size();
  std::vector<int64_t> delta(steps + 1, 0);
  for (size_t i = 0; i < aligned.size(); ++i) {
    if (!blockOffset[i]) continue;
    const memory::Buffer& b = aligned[i];
    const int64_t lo = std::clamp<int64_t>(b.lower, 0, int64_t(steps));
    const int64_t hi = std::clamp<int64_t>(b.upper, lo, int64_t(steps));
    delta[size_t(lo)] += b.size;
    delta[size_t(hi)] -= b.size;
    chart.arenaBytes = std::max(chart.arenaBytes, *blockOffset[i] + b.size);
  }
  chart.live.resize(steps);
  int64_t running = 0;
  for (size_t s = 0; s < steps; ++s) {
    running += delta[s];
    chart.live[s] = running;
    if (running > chart.lowerBound) {
      chart.lowerBound = running;
      chart.peakStep = int64_t(s);
    }
  }
  for (size_t i = 0; i < chart.blocks.size(); ++i)
    if (chart.blocks[i].first <= chart.peakStep && chart.peakStep < chart.blocks[i].end) chart.peakBlocks.push_back(i);
  std::stable_sort(chart.peakBlocks.begin(), chart.peakBlocks.end(),
                   [&](size_t a, size_t b) { return chart.blocks[a].bytes > chart.blocks[b].bytes; });
  return chart;
}

namespace {

std::string csvField(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::vector<bool> atPeak(const MemoryChart& chart) {
  std::vector<bool> peak(chart.blocks.size(), false);
  for (size_t i : chart.peakBlocks)
    if (i < peak.size()) peak[i] = true;
  return peak;
}

}  // namespace

std::string memoryChartCsv(const MemoryChart& chart) {
  std::string out = "value_id,name,producer_id,producer_op,stream,first_step,end_step,offset,bytes,arena_block,"
                    "reuse_block,at_peak\n";
  const std::vector<bool> peak = atPeak(chart);
  for (size_t i = 0; i < chart.blocks.size(); ++i) {
    const MemoryChartBlock& b = chart.blocks[i];
    out += std::to_string(b.valueId) + "," + csvField(b.name) + "," + std::to_string(b.producerId) + "," +
           csvField(b.producerOp) + "," + std::to_string(b.stream) + "," + std::to_string(b.first) + "," +
           std::to_string(b.end) + "," + std::to_string(b.offset) + "," + std::to_string(b.bytes) + "," +
           std::to_string(b.arenaBlock) + "," + std::to_string(b.reuseBlock) + "," + (peak[i] ? "1" : "0") + "\n";
  }
  return out;
}

Json memoryChartJson(const MemoryChart& chart) {
  Json j = Json::object();
  j.set("arena_bytes", chart.arenaBytes);
  j.set("lower_bound_bytes", chart.lowerBound);
  j.set("peak_step", chart.peakStep);
  j.set("reuse_blocks", chart.reuseBlocks);
  j.set("unplaced", chart.unplaced);
  j.set("unsized", chart.unsized);
  Json symbols = Json::array();
  for (const std::string& name : chart.unsizedSymbols) symbols.push(name);
  j.set("unsized_symbols", std::move(symbols));
  j.set("steps", static_cast<int64_t>(chart.stepNodes.size()));
  Json live = Json::array();
  for (int64_t v : chart.live) live.push(v);
  j.set("live", std::move(live));
  Json peakIds = Json::array();
  for (size_t i : chart.peakBlocks)
    if (i < chart.blocks.size()) peakIds.push(chart.blocks[i].valueId);
  j.set("peak_tensors", std::move(peakIds));
  const std::vector<bool> peak = atPeak(chart);
  Json tensors = Json::array();
  for (size_t i = 0; i < chart.blocks.size(); ++i) {
    const MemoryChartBlock& b = chart.blocks[i];
    Json t = Json::object();
    t.set("value_id", b.valueId);
    t.set("name", b.name);
    t.set("producer_id", b.producerId);
    t.set("producer_op", b.producerOp);
    t.set("stream", b.stream);
    t.set("first_step", b.first);
    t.set("end_step", b.end);
    t.set("offset", b.offset);
    t.set("bytes", b.bytes);
    t.set("arena_block", b.arenaBlock);
    t.set("reuse_block", b.reuseBlock);
    t.set("at_peak", bool(peak[i]));
    tensors.push(std::move(t));
  }
  j.set("tensors", std::move(tensors));
  return j;
}

}  // namespace kiln
