#include "report/memory_chart.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>

#include "ir/graph.h"
#include "memory/lifetimes.h"

namespace kiln {

namespace {

// Item `slot` of a comma-separated `mem.out` ("1024,output,-"): an offset only when it is a plain decimal that fits.
std::optional<int64_t> offsetAt(const std::string& text, size_t slot) {
  size_t start = 0;
  for (size_t i = 0; i < slot; ++i) {
    start = text.find(',', start);
    if (start == std::string::npos) return std::nullopt;
    ++start;
  }
  const size_t stop = std::min(text.find(',', start), text.size());
  int64_t value = 0;
  const char* first = text.data() + start;
  const char* last = text.data() + stop;
  if (first == last || *first < '0' || *first > '9') return std::nullopt;  // "output", "-", a sign
  const auto [ptr, ec] = std::from_chars(first, last, value);
  if (ec != std::errc() || ptr != last) return std::nullopt;
  return value;
}

int streamOf(const Node& n) {
  const std::string s = n.annotation("stream");
  int v = -1;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && ptr == s.data() + s.size() && v >= 0 ? v : -1;
}

}  // namespace

MemoryChart buildMemoryChart(const Graph& g) {
  MemoryChart chart;
  for (const Node* n : g.nodes())
    if (n->annotations().count("mem.out")) chart.planned = true;
  if (!chart.planned) return chart;

  const memory::Lifetimes life = memory::computeLifetimes(g);
  const std::vector<memory::Buffer> aligned = memory::alignedBlocks(life);
  chart.unsized = life.unsized;
  chart.stepNodes.reserve(life.order.size());
  for (const Node* n : life.order) chart.stepNodes.push_back(n->id());

  // An arena block's offset is the one recorded for any of its tensors; they agree when the plan came from
  // MemoryAssignment, and the first one wins otherwise.
  std::vector<std::optional<int64_t>> blockOffset(life.blocks.size());
  std::map<int64_t, int> reuseOf;
  for (const memory::TensorLifetime& t : life.tensors) {
    if (t.kind != memory::TensorKind::Arena || t.block < 0) continue;
    const Node* producer = t.value->producer();
    std::optional<int64_t> offset;
    if (producer) offset = offsetAt(producer->annotation("mem.out"), t.value->producerIndex());
    std::optional<int64_t>& known = blockOffset[size_t(t.block)];
    if (!known) known = offset;
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

}  // namespace kiln
