#include "gantt_plot.h"

#include <QPainter>
#include <algorithm>
#include <cmath>

#include "util/units.h"
#include "view_colors.h"

namespace kiln::views {

namespace {

constexpr double kMinHeader = 150, kMaxHeader = 320;  // lane names and utilisation
constexpr double kAxis = 24;     // time labels
constexpr double kRow = 16;
constexpr double kLaneGap = 8;

QString timeText(double us, double span) {
  if (span >= 2000) return QString("%1 ms").arg(us / 1000, 0, 'g', 6);
  return QString("%1 µs").arg(us, 0, 'g', 6);
}

QString siText(double v, const char* unit) {
  const char* prefix[] = {"", "k", "M", "G", "T", "P"};
  int i = 0;
  while (std::abs(v) >= 1000 && i < 5) {
    v /= 1000;
    ++i;
  }
  return QString("%1 %2%3").arg(v, 0, 'f', i == 0 ? 0 : 2).arg(prefix[i]).arg(unit);
}

}  // namespace

GanttPlot::GanttPlot(QWidget* parent) : ChartPlot(Qt::ShiftModifier, parent) { setMinimumSize(320, 120); }

void GanttPlot::setChart(std::shared_ptr<const TimelineChart> chart) {
  chart_ = std::move(chart);
  timing_ = chart_ && chart_->measuredTasks > 0 ? nodeTimingOf(*chart_) : std::unordered_map<int64_t, layout::NodeTiming>{};
  resetSelection(chart_ ? chart_->tasks.size() : 0);
  double end = chart_ ? chart_->latencyUs : 1;
  if (chart_)
    for (const TimelineChartTask& t : chart_->tasks) end = std::max(end, t.endUs);
  end = std::max(end, minExtentUs_);
  // A nanosecond is the finest zoom: below it the simulator's numbers mean nothing.
  xAxis().setExtent(0, end > 0 ? end * 1.01 : 1, 1e-3);
  fill_.clear();
  if (chart_)
    for (const TimelineChartTask& t : chart_->tasks) {
      const QColor unit = unitColor(QString::fromStdString(t.unit));
      // A task of unknown cost is grey: its bar is only the fixed cost, not a measure of its work.
      fill_.push_back(t.costUnknown ? QColor(160, 160, 160) : t.memoryBound ? towardsBase(unit, palette(), 0.45) : unit);
    }
  rebuildLanes();
  fit();
}

void GanttPlot::setTimeExtentAtLeast(double us) {
  minExtentUs_ = std::isfinite(us) && us > 0 ? us : 0;
  setChart(chart_);
}

void GanttPlot::setTimeWindow(double fromUs, double toUs) {
  xAxis().setWindow(fromUs, toUs);
  reportedLo_ = xAxis().lo();  // set from outside: not reported back (no ping-pong between synced charts)
  reportedHi_ = xAxis().hi();
  update();
}

void GanttPlot::setLanesByUnit(bool byUnit) {
  if (byUnit == byUnit_) return;
  byUnit_ = byUnit;
  rebuildLanes();
  update();
}

void GanttPlot::rebuildLanes() {
  lanes_ = chart_ ? timelineLanes(*chart_, byUnit_) : std::vector<TimelineChartLane>{};
  // Wide enough for the longest lane name ("measured · stream 46") beside its swatch and utilisation.
  const QFontMetricsF fm(font());
  double widest = 0;
  for (const TimelineChartLane& lane : lanes_) widest = std::max(widest, fm.horizontalAdvance(QString::fromStdString(lane.label)));
  const double header = std::clamp(widest + 18 + 54 + 4, kMinHeader, kMaxHeader);
  if (header != header_) {
    header_ = header;
    layoutAreas();
  }
  const size_t n = chart_ ? chart_->tasks.size() : 0;
  laneOfTask_.assign(n, -1);
  rowOfTask_.assign(n, 0);
  laneTop_.clear();
  laneMaxUs_.clear();
  double y = 0;
  for (size_t l = 0; l < lanes_.size(); ++l) {
    laneTop_.push_back(y);
    double longest = 0;
    for (size_t k = 0; k < lanes_[l].tasks.size(); ++k) {
      const size_t t = lanes_[l].tasks[k];
      laneOfTask_[t] = int(l);
      rowOfTask_[t] = lanes_[l].row[k];
      longest = std::max(longest, chart_->tasks[t].endUs - chart_->tasks[t].startUs);
    }
    laneMaxUs_.push_back(longest);
    y += lanes_[l].rows * kRow + kLaneGap;
  }
  contentHeight_ = y;
  scrollLanes(0);
}

void GanttPlot::layoutAreas() {
  setPlotArea(QRectF(header_, kAxis, std::max(1.0, width() - header_ - 8), std::max(1.0, height() - kAxis - 4)));
  scrollLanes(0);
}

void GanttPlot::scrollLanes(double pixels) {
  scrollY_ = std::clamp(scrollY_ + pixels, 0.0, std::max(0.0, contentHeight_ - plotArea().height()));
}

bool GanttPlot::inWindow(size_t task) const {
  const TimelineChartTask& t = chart_->tasks[task];
  return t.endUs >= xAxis().lo() && t.startUs <= xAxis().hi();
}

void GanttPlot::bringIntoView(size_t task, bool selectionInWindow) {
  const QRectF& area = plotArea();
  const TimelineChartTask& t = chart_->tasks[task];
  if (!selectionInWindow) xAxis().centreOn((t.startUs + t.endUs) / 2);
  if (laneOfTask_[task] < 0) return;
  const double top = rowTop(task);
  if (top < area.top() || top + kRow > area.bottom()) scrollLanes(top - (area.top() + area.bottom()) / 2);
}

double GanttPlot::rowTop(size_t task) const {
  const int lane = laneOfTask_[task];
  return plotArea().top() - scrollY_ + laneTop_[size_t(lane)] + rowOfTask_[task] * kRow;
}

QRectF GanttPlot::taskRect(size_t task) const {
  const QRectF& area = plotArea();
  const TimelineChartTask& t = chart_->tasks[task];
  const double limitL = area.left() - 4, limitR = area.right() + 4;
  const double x0 = std::clamp(xAxis().toPixel(t.startUs), limitL, limitR);
  const double x1 = std::clamp(xAxis().toPixel(t.endUs), limitL, limitR);
  return QRectF(x0, rowTop(task) + 1, std::max(1.0, x1 - x0), kRow - 2);
}

void GanttPlot::viewMoved() {
  if (xAxis().lo() != reportedLo_ || xAxis().hi() != reportedHi_) {
    reportedLo_ = xAxis().lo();
    reportedHi_ = xAxis().hi();
    emit timeWindowChanged(reportedLo_, reportedHi_);
  }
  update();
}

void GanttPlot::paintChart(QPainter& p) const {
  paintLanes(p);
  if (!byUnit_) paintArrows(p);
  paintHeader(p);
  paintTimeAxis(p);
}

void GanttPlot::paintLanes(QPainter& p) const {
  const QRectF& area = plotArea();
  p.save();
  p.setClipRect(area);
  const QPalette& pal = palette();
  const QColor stripe = towardsBase(pal.color(QPalette::Text), pal, 0.96);
  const double lo = xAxis().lo(), hi = xAxis().hi();
  for (size_t l = 0; l < lanes_.size(); ++l) {
    const TimelineChartLane& lane = lanes_[l];
    const double top = area.top() - scrollY_ + laneTop_[l];
    const double laneHeight = lane.rows * kRow;
    if (top + laneHeight < area.top() || top > area.bottom()) continue;
    if (l % 2 == 0) p.fillRect(QRectF(area.left(), top, area.width(), laneHeight), stripe);
    // Tasks by start: the first that can reach into the window starts at most the lane's longest task earlier.
    auto begin = std::lower_bound(lane.tasks.begin(), lane.tasks.end(), lo - laneMaxUs_[l],
                                  [&](size_t t, double v) { return chart_->tasks[t].startUs < v; });
    std::vector<int> lastPixel(size_t(lane.rows), -1), lastCritical(size_t(lane.rows), -1);
    for (auto it = begin; it != lane.tasks.end(); ++it) {
      const size_t i = *it;
      const TimelineChartTask& t = chart_->tasks[i];
      if (t.startUs > hi) break;
      if (t.endUs < lo) continue;
      const int row = rowOfTask_[i];
      // Sub-pixel bars landing on a pixel already painted in this row add nothing (unless they need a mark).
      const double x0 = xAxis().toPixel(t.startUs);
      const int column = int(x0);
      if (xAxis().toPixel(t.endUs) - x0 < 1.5 && column == lastPixel[size_t(row)] && !isSelected(i) &&
          (!t.critical || column == lastCritical[size_t(row)]))
        continue;
      lastPixel[size_t(row)] = column;
      if (t.critical) lastCritical[size_t(row)] = column;
      const QRectF r = taskRect(i);
      p.fillRect(r, fill_[i]);
      if (t.critical) {
        if (r.width() >= 4) {
          p.setPen(QPen(criticalColor(), 1.5));
          p.setBrush(Qt::NoBrush);
          p.drawRect(r.adjusted(0.75, 0.75, -0.75, -0.75));
        } else {
          p.fillRect(QRectF(r.left(), r.bottom() - 2, std::max(2.0, r.width()), 3), criticalColor());
        }
      }
    }
  }
  // Selection last, over everything.
  for (size_t i = 0; i < chart_->tasks.size(); ++i)
    if (isSelected(i) && laneOfTask_[i] >= 0 && inWindow(i)) paintSelectionRim(p, taskRect(i));
  p.restore();
}

void GanttPlot::paintArrows(QPainter& p) const {
  const QRectF& area = plotArea();
  p.save();
  p.setClipRect(area);
  p.setRenderHint(QPainter::Antialiasing);
  QColor c = palette().color(QPalette::Text);
  c.setAlphaF(0.55);
  p.setPen(QPen(c, 1));
  p.setBrush(c);
  const double lo = xAxis().lo(), hi = xAxis().hi();
  std::vector<std::pair<QPointF, QPointF>> visible;
  for (const TimelineChartArrow& a : chart_->arrows) {
    const TimelineChartTask& from = chart_->tasks[a.record];
    const TimelineChartTask& to = chart_->tasks[a.wait];
    if (laneOfTask_[a.record] < 0 || laneOfTask_[a.wait] < 0) continue;
    // The wait is released when the record has run: the arrow goes from the record's end to the wait's end.
    if (std::max(from.endUs, to.endUs) < lo || std::min(from.endUs, to.endUs) > hi) continue;
    const QPointF s(xAxis().toPixel(from.endUs), rowTop(a.record) + kRow / 2);
    const QPointF e(xAxis().toPixel(to.endUs), rowTop(a.wait) + kRow / 2);
    if ((s.y() < area.top() && e.y() < area.top()) || (s.y() > area.bottom() && e.y() > area.bottom())) continue;
    visible.emplace_back(s, e);
  }
  // More arrows than a person can follow (a few per 10 pixels) are a grey smear and cost most of the frame: say how
  // many there are and draw them once zoomed in.
  if (double(visible.size()) > area.width() / 3) {
    const QString note = QString("%L1 event arrows: zoom in to see them").arg(visible.size());
    const QFontMetricsF fm(font());
    const QRectF box(area.right() - fm.horizontalAdvance(note) - 12, area.bottom() - fm.height() - 4,
                     fm.horizontalAdvance(note) + 8, fm.height());
    p.fillRect(box, palette().color(QPalette::Base));
    p.setPen(palette().color(QPalette::Text));
    p.drawText(box, Qt::AlignCenter, note);
    p.restore();
    return;
  }
  for (const auto& [s, e] : visible) {
    p.drawLine(s, e);
    const QPointF d = e - s;
    const double len = std::hypot(d.x(), d.y());
    if (len < 8) continue;
    const QPointF u = d / len, n(-u.y(), u.x());
    const QPointF head[3] = {e, e - u * 6 + n * 3, e - u * 6 - n * 3};
    p.drawPolygon(head, 3);
  }
  p.restore();
}

void GanttPlot::paintHeader(QPainter& p) const {
  const QRectF& area = plotArea();
  const QPalette& pal = palette();
  p.save();
  p.setClipRect(QRectF(0, area.top(), header_, area.height()));
  p.fillRect(QRectF(0, area.top(), header_, area.height()), pal.color(QPalette::Window));
  const QFontMetricsF fm(font());
  for (size_t l = 0; l < lanes_.size(); ++l) {
    const TimelineChartLane& lane = lanes_[l];
    const double top = area.top() - scrollY_ + laneTop_[l];
    const double laneHeight = std::max(lane.rows * kRow, fm.height() + 6);
    if (top + laneHeight < area.top() || top > area.bottom()) continue;
    const QString util = lane.hasUtilisation
                             ? QString("%1%").arg(lane.utilisation * 100, 0, 'f', lane.utilisation < 0.1 ? 1 : 0)
                             : QString();
    // A stream's swatch: the hue the memory view gives the stream when it colours by stream.
    double labelLeft = 6;
    if (lane.stream >= 0) {
      p.fillRect(QRectF(6, top + fm.height() / 2 - 4, 8, 8), categoryColor(lane.stream));
      labelLeft = 18;
    }
    p.setPen(pal.color(QPalette::WindowText));
    p.drawText(QRectF(labelLeft, top, header_ - 54 - labelLeft, fm.height()), Qt::AlignLeft | Qt::AlignVCenter,
               QString::fromStdString(lane.label));
    p.drawText(QRectF(header_ - 54, top, 48, fm.height()), Qt::AlignRight | Qt::AlignVCenter, util);
    // A bar under the name: how busy the lane is over the whole run.
    const QRectF bar(6, top + fm.height() + 1, header_ - 12, 3);
    if (lane.hasUtilisation && bar.bottom() <= top + lane.rows * kRow + kLaneGap / 2) {
      p.fillRect(bar, towardsBase(pal.color(QPalette::WindowText), pal, 0.85));
      p.fillRect(QRectF(bar.left(), bar.top(), bar.width() * std::clamp(lane.utilisation, 0.0, 1.0), bar.height()),
                 pal.color(QPalette::Highlight));
    }
  }
  p.restore();
  p.setPen(pal.color(QPalette::Mid));
  p.drawLine(QPointF(header_ - 0.5, area.top()), QPointF(header_ - 0.5, area.bottom()));
}

void GanttPlot::paintTimeAxis(QPainter& p) const {
  const QPalette& pal = palette();
  p.fillRect(QRectF(0, 0, width(), kAxis), pal.color(QPalette::Window));
  p.setPen(pal.color(QPalette::WindowText));
  const QFontMetricsF fm(font());
  const double span = xAxis().hi() - xAxis().lo();
  p.drawText(QRectF(6, 0, header_ - 12, kAxis), Qt::AlignLeft | Qt::AlignVCenter, byUnit_ ? "unit" : "stream");
  double lastRight = -1e9;
  for (double v : xAxis().ticks(8)) {
    const double px = xAxis().toPixel(v);
    const QString label = timeText(v, span);
    const double w = fm.horizontalAdvance(label);
    // The first label may lean right of its tick rather than into the header.
    const double left = std::max(px - w / 2, header_ + 2);
    if (left < lastRight + 8 || left + w > width()) continue;
    p.drawLine(QPointF(px, kAxis - 5), QPointF(px, kAxis));
    p.drawText(QRectF(left, 2, w, kAxis - 7), Qt::AlignCenter, label);
    lastRight = left + w;
  }
  p.drawLine(QPointF(header_, kAxis - 0.5), QPointF(width(), kAxis - 0.5));
}

int GanttPlot::taskAt(QPointF pos) const {
  const QRectF& area = plotArea();
  if (!chart_ || !area.contains(pos)) return -1;
  const double t = xAxis().toData(pos.x());
  const double tolerance = 3 / xAxis().pixelsPerUnit();  // three pixels: thin tasks stay clickable
  int best = -1;
  double bestDistance = 0;
  for (size_t l = 0; l < lanes_.size(); ++l) {
    const double top = area.top() - scrollY_ + laneTop_[l];
    if (pos.y() < top || pos.y() >= top + lanes_[l].rows * kRow) continue;
    const int row = int((pos.y() - top) / kRow);
    const auto& tasks = lanes_[l].tasks;
    auto it = std::lower_bound(tasks.begin(), tasks.end(), t - tolerance - laneMaxUs_[l],
                               [&](size_t i, double v) { return chart_->tasks[i].startUs < v; });
    for (; it != tasks.end() && chart_->tasks[*it].startUs <= t + tolerance; ++it) {
      if (rowOfTask_[*it] != row) continue;
      const TimelineChartTask& task = chart_->tasks[*it];
      const double distance = t < task.startUs ? task.startUs - t : (t > task.endUs ? t - task.endUs : 0);
      if (distance > tolerance) continue;
      if (best < 0 || distance < bestDistance) {
        best = int(*it);
        bestDistance = distance;
      }
    }
  }
  return best;
}

QPoint GanttPlot::taskCentre(size_t task) const {
  if (!chart_ || task >= chart_->tasks.size() || laneOfTask_[task] < 0) return {};
  return taskRect(task).intersected(plotArea()).center().toPoint();
}

QString GanttPlot::describe(size_t task) const {
  const TimelineChartTask& t = chart_->tasks[task];
  QString s = t.measured ? QString("<span style='color:#b45309'>measured</span> ") : QString();
  s += t.opType.empty() ? QString("<b>%1</b>").arg(QString::fromStdString(t.type))
                               : QString("<b>%1</b> %2 (node %3)<br>%4")
                                     .arg(QString::fromStdString(t.opType).toHtmlEscaped(),
                                          QString::fromStdString(t.nodeName).toHtmlEscaped())
                                     .arg(t.nodeId)
                                     .arg(QString::fromStdString(t.type));
  s += QString(" on stream %1 · %2").arg(t.stream).arg(QString::fromStdString(t.unit));
  if (t.cores > 0) s += QString(" × %1 cores").arg(t.cores);
  if (t.event >= 0) s += QString(" · event %1").arg(t.event);
  s += QString("<br>%1 – %2 µs: <b>%3 µs</b>").arg(t.startUs, 0, 'f', 2).arg(t.endUs, 0, 'f', 2).arg(t.endUs - t.startUs, 0, 'f', 2);
  if (t.flops > 0 || t.bytes > 0) {
    s += QString("<br>%1 · %2 from/to HBM").arg(siText(t.flops, "FLOP"), QString::fromStdString(formatBytes(t.bytes)));
    if (t.type == "KERNEL" || t.type == "KERNEL_EX") s += t.memoryBound ? " · <b>memory-bound</b>" : " · <b>compute-bound</b>";
  }
  if (t.costUnknown)
    s += "<br><b>cost unknown</b>: the node's shapes were not inferred, so only the task's fixed cost is drawn";
  if (!t.shapes.empty()) s += "<br>" + QString::fromStdString(t.shapes).toHtmlEscaped();
  if (t.critical) s += "<br><span style='color:#dc2626'>on the critical path</span>";
  // The other side of the same node: what was measured for a simulated task, what was simulated for a measured one.
  if (auto it = timing_.find(t.nodeId); t.nodeId > 0 && it != timing_.end()) {
    const layout::NodeTiming& n = it->second;
    if (!t.measured && n.measuredTasks > 0)
      s += QString("<br>measured: %1 µs per task (%L2 tasks)").arg(n.measuredUs / n.measuredTasks, 0, 'f', 2).arg(n.measuredTasks);
    if (t.measured && n.us > 0) s += QString("<br>simulated: %1 µs").arg(n.us, 0, 'f', 2);
  }
  return s;
}

void GanttPlot::wheelY(QPointF, double notches) { scrollLanes(-notches * kRow * 3); }

double GanttPlot::keyStepY() const { return kRow * 2; }

}  // namespace kiln::views
