#include "report/chart_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "report/svg_canvas.h"
#include "util/units.h"

namespace kiln {

namespace {

constexpr size_t kMaxShapes = 4000;  // beyond this an inline SVG makes the page slow to open

std::string reuseColour(int block) {
  static const char* palette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                  "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
  return palette[static_cast<size_t>(block < 0 ? 0 : block) % 10];
}

std::string unitColour(const std::string& unit) {
  if (unit == "cube") return "#4e79a7";
  if (unit == "vector") return "#59a14f";
  if (unit == "aicpu") return "#edc948";
  if (unit == "dma") return "#9c755f";
  return "#bab0ac";
}

std::string pct(double v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.0f%%", 100 * v);
  return buf;
}

std::string usText(double us) { return formatDuration(us / 1e6); }

// Indexes of `n` items, keeping the `keep` largest by `weight` (in their original order).
template <typename Weight>
std::vector<size_t> largest(size_t n, size_t keep, Weight weight) {
  std::vector<size_t> idx(n);
  std::iota(idx.begin(), idx.end(), size_t{0});
  if (n <= keep) return idx;
  std::nth_element(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(keep), idx.end(),
                   [&](size_t a, size_t b) { return weight(a) > weight(b); });
  idx.resize(keep);
  std::sort(idx.begin(), idx.end());
  return idx;
}

}  // namespace

std::string memoryChartSvg(const MemoryChart& chart, double width) {
  const double left = 70, top = 20, plotH = 320, bottom = 40;
  const double plotW = width - left - 10;
  SvgCanvas svg(width, top + plotH + bottom);
  const double steps = std::max<double>(1, double(chart.stepNodes.size()));
  const double bytes = std::max<double>(1, double(std::max(chart.arenaBytes, chart.lowerBound)));
  auto X = [&](double step) { return left + plotW * step / steps; };
  auto Y = [&](double b) { return top + plotH - plotH * b / bytes; };
  svg.rect(left, top, plotW, plotH, "#fcfcfc", {}, " stroke=\"#ccc\"");
  const std::vector<size_t> shown =
      largest(chart.blocks.size(), kMaxShapes, [&](size_t i) { return double(chart.blocks[i].bytes); });
  for (size_t i : shown) {
    const MemoryChartBlock& b = chart.blocks[i];
    const std::string tip = (b.name.empty() ? "#" + std::to_string(b.valueId) : b.name) + "\n" + b.producerOp + ", " +
                            formatBytes(double(b.bytes)) + " at offset " + formatBytes(double(b.offset)) +
                            "\nsteps " + std::to_string(b.first) + "–" + std::to_string(b.end) +
                            (b.stream >= 0 ? ", stream " + std::to_string(b.stream) : "");
    svg.rect(X(double(b.first)), Y(double(b.offset + b.bytes)), X(double(b.end)) - X(double(b.first)),
             Y(double(b.offset)) - Y(double(b.offset + b.bytes)), reuseColour(b.reuseBlock), tip,
             " fill-opacity=\"0.75\" stroke=\"#333\" stroke-width=\"0.3\"");
  }
  // The live curve: bytes alive at each step, a step function.
  std::string d;
  for (size_t s = 0; s < chart.live.size(); ++s)
    d += (s ? " L" : "M") + svgNum(X(double(s))) + "," + svgNum(Y(double(chart.live[s]))) + " L" +
         svgNum(X(double(s + 1))) + "," + svgNum(Y(double(chart.live[s])));
  if (!d.empty()) svg.path(d, "#222", "none", " stroke-width=\"1\"");
  svg.line(left, Y(double(chart.arenaBytes)), left + plotW, Y(double(chart.arenaBytes)), "#d62728",
           " stroke-dasharray=\"6,3\"");
  svg.text(left + plotW - 4, Y(double(chart.arenaBytes)) - 3, "arena " + formatBytes(double(chart.arenaBytes)), "end",
           10, " fill=\"#d62728\"");
  svg.line(left, Y(double(chart.lowerBound)), left + plotW, Y(double(chart.lowerBound)), "#2ca02c",
           " stroke-dasharray=\"2,2\"");
  svg.text(left + 4, Y(double(chart.lowerBound)) - 3, "lower bound " + formatBytes(double(chart.lowerBound)), "start",
           10, " fill=\"#2ca02c\"");
  svg.text(left - 4, top + 10, formatBytes(bytes), "end", 10);
  svg.text(left - 4, top + plotH, "0", "end", 10);
  std::string note = std::to_string(chart.stepNodes.size()) + " steps, " + std::to_string(chart.blocks.size()) +
                     " tensors, " + std::to_string(chart.reuseBlocks) + " reuse blocks";
  if (shown.size() < chart.blocks.size()) note += " (the " + std::to_string(shown.size()) + " largest drawn)";
  svg.text(left, top + plotH + 16, "execution step →   " + note, "start", 11);
  return svg.str();
}

std::string timelineChartSvg(const TimelineChart& chart, double width) {
  const std::vector<TimelineChartLane> lanes = timelineLanes(chart, false);
  const double left = 130, top = 10, rowH = 12, laneGap = 6, axisH = 30;
  const double plotW = width - left - 10;
  double height = top;
  for (const TimelineChartLane& l : lanes) height += l.rows * rowH + laneGap;
  SvgCanvas svg(width, height + axisH);
  const double span = std::max(chart.latencyUs, 1e-9);
  auto X = [&](double us) { return left + plotW * us / span; };
  const std::vector<size_t> shown = largest(chart.tasks.size(), kMaxShapes, [&](size_t i) {
    return chart.tasks[i].endUs - chart.tasks[i].startUs + (chart.tasks[i].critical ? 1e12 : 0);
  });
  std::vector<char> draw(chart.tasks.size(), 0);
  for (size_t i : shown) draw[i] = 1;
  double y = top;
  for (const TimelineChartLane& lane : lanes) {
    const double laneH = lane.rows * rowH;
    svg.rect(left, y, plotW, laneH, "#f7f7f7");
    svg.text(left - 4, y + std::min(laneH, rowH) - 2,
             lane.label + (lane.hasUtilisation ? " " + pct(lane.utilisation) : std::string()), "end", 10);
    for (size_t k = 0; k < lane.tasks.size(); ++k) {
      const size_t ti = lane.tasks[k];
      if (!draw[ti]) continue;
      const TimelineChartTask& t = chart.tasks[ti];
      const std::string tip = (t.nodeName.empty() ? t.type : t.nodeName + " (" + t.opType + ")") + "\n" + t.type +
                              " on " + t.unit + ", " + usText(t.startUs) + " → " + usText(t.endUs) +
                              (t.opType.empty() ? ""
                               : t.costUnknown ? ", cost unknown (shapes not inferred)"
                               : (t.memoryBound ? ", memory-bound" : ", compute-bound")) +
                              (t.critical ? "\non the critical path" : "") +
                              (t.shapes.empty() ? "" : "\n" + t.shapes);
      svg.rect(X(t.startUs), y + lane.row[k] * rowH + 1, X(t.endUs) - X(t.startUs), rowH - 2, unitColour(t.unit), tip,
               t.critical ? " stroke=\"#d62728\" stroke-width=\"1\"" : "");
    }
    y += laneH + laneGap;
  }
  svg.line(left, y, left + plotW, y, "#999");
  svg.text(left, y + 14, "0", "start", 10);
  svg.text(left + plotW, y + 14, usText(chart.latencyUs) + " (" + chart.source + ")", "end", 10);
  if (shown.size() < chart.tasks.size())
    svg.text(left + plotW / 2, y + 14,
             "the " + std::to_string(shown.size()) + " longest of " + std::to_string(chart.tasks.size()) + " tasks drawn",
             "middle", 10);
  return svg.str();
}

std::string sweepChartSvg(const SweepChart& chart, double width) {
  const double left = 80, right = 80, top = 30, plotH = 260, bottom = 60;
  const double plotW = width - left - right;
  std::vector<const SweepPoint*> ok;
  for (const SweepPoint& p : chart.points)
    if (p.ok) ok.push_back(&p);
  const size_t failed = chart.points.size() - ok.size();
  SvgCanvas svg(width, top + plotH + bottom + 14.0 * double(failed));
  svg.text(left, 18, "arena and latency against " + chart.symbol, "start", 13);
  svg.rect(left, top, plotW, plotH, "#fcfcfc", {}, " stroke=\"#ccc\"");
  if (chart.points.empty()) return svg.str();
  int64_t lo = chart.points.front().value, hi = lo;
  for (const SweepPoint& p : chart.points) lo = std::min(lo, p.value), hi = std::max(hi, p.value);
  const bool logX = lo > 0 && double(hi) / double(lo) > 8;
  const auto xOf = [&](int64_t v) {
    if (hi == lo) return left + plotW / 2;
    const double t = logX ? std::log(double(v) / double(lo)) / std::log(double(hi) / double(lo))
                          : double(v - lo) / double(hi - lo);
    return left + plotW * t;
  };
  double maxBytes = 1, maxUs = 1;
  for (const SweepPoint* p : ok) {
    maxBytes = std::max({maxBytes, double(p->arenaBytes), double(p->lowerBoundBytes), double(p->noReuseBytes),
                         double(p->ioBytes)});
    maxUs = std::max(maxUs, p->latencyUs);
  }
  const auto yBytes = [&](double b) { return top + plotH - plotH * b / (maxBytes * 1.05); };
  const auto yUs = [&](double us) { return top + plotH - plotH * us / (maxUs * 1.05); };
  for (int i = 0; i <= 4; ++i) {  // gridlines with both scales
    const double f = i / 4.0;
    const double y = top + plotH - plotH * f;
    svg.line(left, y, left + plotW, y, "#eee");
    svg.text(left - 6, y + 4, formatBytes(f * maxBytes * 1.05), "end", 10);
    svg.text(left + plotW + 6, y + 4, formatDuration(f * maxUs * 1.05 / 1e6), "start", 10);
  }
  for (const SweepPoint& p : chart.points) {
    svg.line(xOf(p.value), top + plotH, xOf(p.value), top + plotH + 4, "#999");
    svg.text(xOf(p.value), top + plotH + 16, std::to_string(p.value), "middle", 10);
  }
  struct Series {
    const char* name;
    const char* colour;
    bool latency;
    double (*get)(const SweepPoint&);
    const char* style;  // arena wide under a thin lower bound: at the bound they coincide and both stay visible
  };
  const Series series[] = {
      {"memory without reuse", "#bab0ac", false, [](const SweepPoint& p) { return double(p.noReuseBytes); },
       " stroke-width=\"2\""},
      {"graph inputs and outputs", "#9467bd", false, [](const SweepPoint& p) { return double(p.ioBytes); },
       " stroke-width=\"2\" stroke-dasharray=\"2,2\""},
      {"arena", "#d62728", false, [](const SweepPoint& p) { return double(p.arenaBytes); }, " stroke-width=\"5\""},
      {"lower bound", "#2ca02c", false, [](const SweepPoint& p) { return double(p.lowerBoundBytes); },
       " stroke-width=\"1.5\" stroke-dasharray=\"4,3\""},
      {"latency", "#1f77b4", true, [](const SweepPoint& p) { return p.latencyUs; },
       " stroke-width=\"2\" stroke-dasharray=\"8,3\""},
  };
  double legendX = left;
  for (const Series& s : series) {
    std::string d;
    bool pen = false;
    for (const SweepPoint& p : chart.points) {  // a failed point breaks the line
      if (!p.ok) {
        pen = false;
        continue;
      }
      const double x = xOf(p.value), y = s.latency ? yUs(s.get(p)) : yBytes(s.get(p));
      d += (pen ? " L" : " M") + svgNum(x) + "," + svgNum(y);
      pen = true;
      const std::string tip = chart.symbol + " = " + std::to_string(p.value) + "\n" + s.name + ": " +
                              (s.latency ? formatDuration(p.latencyUs / 1e6) : formatBytes(s.get(p))) +
                              (p.binding.empty() ? "" : "\n" + p.binding);
      svg.rect(x - 3, y - 3, 6, 6, s.colour, tip);
    }
    if (!d.empty()) svg.path(d, s.colour, "none", s.style);
    svg.rect(legendX, top + plotH + 28, 10, 10, s.colour);
    svg.text(legendX + 14, top + plotH + 37, std::string(s.name) + (s.latency ? " (right axis)" : ""), "start", 11);
    legendX += 60 + 7.0 * double(std::char_traits<char>::length(s.name));
  }
  double y = top + plotH + bottom;
  for (const SweepPoint& p : chart.points)
    if (!p.ok) {
      svg.text(left, y, chart.symbol + " = " + std::to_string(p.value) + ": " + p.error, "start", 10,
               " fill=\"#d62728\"");
      y += 14;
    }
  return svg.str();
}

}  // namespace kiln
