#include "memory_plot.h"

#include <QPainter>
#include <QPainterPath>
#include <algorithm>
#include <cmath>

#include "util/units.h"
#include "view_colors.h"

namespace kiln::views {

namespace {

constexpr double kLeft = 78;     // byte labels
constexpr double kRight = 14;
constexpr double kTop = 10;
constexpr double kStepAxis = 22;  // step labels between the blocks and the curve
constexpr double kBottom = 6;

QString bytesText(double b) { return QString::fromStdString(formatBytes(b)); }

}  // namespace

MemoryPlot::MemoryPlot(QWidget* parent) : ChartPlot(Qt::ControlModifier, parent) { setMinimumSize(320, 140); }

void MemoryPlot::setChart(std::shared_ptr<const MemoryChart> chart) {
  chart_ = std::move(chart);
  resetSelection(chart_ ? chart_->blocks.size() : 0);
  double steps = chart_ ? double(chart_->stepNodes.size()) : 1;
  double top = chart_ ? double(std::max(chart_->arenaBytes, chart_->lowerBound)) : 1;
  if (chart_)
    for (const MemoryChartBlock& b : chart_->blocks) {
      steps = std::max(steps, double(b.end));
      top = std::max(top, double(b.offset) + double(b.bytes));
    }
  top = std::max(top, minBytes_);
  curveMax_ = std::max({1.0, double(chart_ ? std::max({chart_->arenaBytes, chart_->lowerBound, chart_->measuredPeak}) : 1),
                        minBytes_}) * 1.08;
  recolour();
  xAxis().setExtent(0, std::max(steps, 1.0), 4);
  bytes_.setExtent(0, std::max(top, 1.0) * 1.06, 512);
  fit();
}

void MemoryPlot::setByteExtentAtLeast(double bytes) {
  minBytes_ = std::isfinite(bytes) && bytes > 0 ? bytes : 0;
  setChart(chart_);
}

void MemoryPlot::setColourBy(ColourBy c) {
  colourBy_ = c;
  recolour();
  update();
}

void MemoryPlot::recolour() {
  fill_.clear();
  for (size_t i = 0; chart_ && i < chart_->blocks.size(); ++i) fill_.push_back(blockColour(i));
}

QColor MemoryPlot::blockColour(size_t block) const {
  if (!chart_ || block >= chart_->blocks.size()) return unitColor("");
  const MemoryChartBlock& b = chart_->blocks[block];
  switch (colourBy_) {
    case ColourBy::ProducerOp: return categoryColor(QString::fromStdString(b.producerOp));
    case ColourBy::Stream: return b.stream < 0 ? unitColor("") : categoryColor(b.stream);
    case ColourBy::ReuseBlock: break;
  }
  return categoryColor(b.reuseBlock);
}

bool MemoryPlot::inWindow(size_t block) const {
  const MemoryChartBlock& b = chart_->blocks[block];
  return double(b.end) > xAxis().lo() && double(b.first) < xAxis().hi() &&
         double(b.offset) + double(b.bytes) > bytes_.lo() && double(b.offset) < bytes_.hi();
}

void MemoryPlot::bringIntoView(size_t block, bool selectionInWindow) {
  if (selectionInWindow) return;
  const MemoryChartBlock& b = chart_->blocks[block];
  xAxis().centreOn((double(b.first) + double(b.end)) / 2);
  bytes_.centreOn(double(b.offset) + double(b.bytes) / 2);
}

void MemoryPlot::layoutAreas() {
  const double w = width(), h = height();
  // The live-bytes curve takes a quarter, at least 60 px, but never more than a third of a short plot: the blocks
  // above it are what the chart is for.
  const double avail = h - kTop - kStepAxis - kBottom;
  const double curve = std::max(std::min(60.0, avail * 0.35), avail * 0.24);
  setPlotArea(QRectF(kLeft, kTop, std::max(1.0, w - kLeft - kRight), std::max(1.0, h - kTop - kStepAxis - kBottom - curve)));
  const QRectF& blockArea = plotArea();
  curveArea_ = QRectF(kLeft, blockArea.bottom() + kStepAxis, blockArea.width(), curve);
  bytes_.setPixels(blockArea.top(), blockArea.bottom(), true);
}

QRectF MemoryPlot::blockRect(const MemoryChartBlock& b) const {
  const QRectF& blockArea = plotArea();
  // Clipped to a margin around the area first: pixel coordinates of a far-away block can exceed what QPainter takes.
  const QRectF limit = blockArea.adjusted(-4, -4, 4, 4);
  const double x0 = std::clamp(xAxis().toPixel(double(b.first)), limit.left(), limit.right());
  const double x1 = std::clamp(xAxis().toPixel(double(b.end)), limit.left(), limit.right());
  const double yTop = std::clamp(bytes_.toPixel(double(b.offset) + double(b.bytes)), limit.top(), limit.bottom());
  const double yBottom = std::clamp(bytes_.toPixel(double(b.offset)), limit.top(), limit.bottom());
  // Never thinner than a pixel: a small tensor over a long run stays visible when zoomed out.
  return QRectF(x0, yTop, std::max(1.0, x1 - x0), std::max(1.0, yBottom - yTop));
}

void MemoryPlot::paintChart(QPainter& p) const {
  paintBlocks(p);
  paintCurve(p);
  paintAxes(p);
}

void MemoryPlot::paintBlocks(QPainter& p) const {
  const QRectF& blockArea = plotArea();
  p.save();
  p.setClipRect(blockArea);
  const QColor outline = palette().color(QPalette::Text);
  for (size_t i = 0; i < chart_->blocks.size(); ++i) {
    const MemoryChartBlock& b = chart_->blocks[i];
    if (!inWindow(i)) continue;
    const QRectF r = blockRect(b);
    const QColor& c = fill_[i];
    p.fillRect(r, c);
    if (r.width() >= 6 && r.height() >= 5) {
      // An edge between neighbours that share a colour (the same reuse block follows itself in time).
      p.setPen(QPen(c.darker(150), 0));
      p.drawRect(r.adjusted(0, 0, -0.5, -0.5));
    }
  }
  // Selection on top.
  for (size_t i = 0; i < chart_->blocks.size(); ++i)
    if (isSelected(i) && inWindow(i)) paintSelectionRim(p, blockRect(chart_->blocks[i]));

  // The arena and the lower bound, labelled at the right end; the labels step apart when the lines are close.
  const double arenaY = bytes_.toPixel(double(chart_->arenaBytes));
  const double boundY = bytes_.toPixel(double(chart_->lowerBound));
  QFont f = font();
  f.setPointSizeF(f.pointSizeF() * 0.9);
  p.setFont(f);
  const double lineHeight = QFontMetricsF(f).height();
  auto line = [&](double y, const QString& text, const QColor& colour, Qt::PenStyle style, bool below) {
    p.setPen(QPen(colour, 1.5, style));
    p.drawLine(QPointF(blockArea.left(), y), QPointF(blockArea.right(), y));
    const double w = QFontMetricsF(f).horizontalAdvance(text) + 8;
    const QRectF box(std::max(blockArea.left(), blockArea.right() - w - 4), below ? y + 2 : y - lineHeight - 2, w,
                     lineHeight);
    p.fillRect(box, palette().color(QPalette::Base));
    p.setPen(colour);
    p.drawText(box, Qt::AlignCenter, text);
  };
  const QColor text = palette().color(QPalette::Text);
  // Labels sit above their line unless that leaves the plot; the lower bound's steps below when the two are close.
  const bool arenaBelow = arenaY - lineHeight - 2 < blockArea.top();
  if (chart_->arenaBytes == chart_->lowerBound) {
    line(arenaY, QString("arena %1 = the lower bound (no plan can be smaller)").arg(bytesText(double(chart_->arenaBytes))),
         text, Qt::SolidLine, arenaBelow);
  } else {
    const double ratio = chart_->lowerBound > 0 ? double(chart_->arenaBytes) / double(chart_->lowerBound) : 0;
    line(arenaY, QString("arena %1 (%2× the lower bound)").arg(bytesText(double(chart_->arenaBytes))).arg(ratio, 0, 'f', 3),
         text, Qt::SolidLine, arenaBelow);
    line(boundY, "lower bound " + bytesText(double(chart_->lowerBound)), outline, Qt::DashLine,
         boundY - arenaY < (arenaBelow ? 2 : 1) * (lineHeight + 4));
  }
  if (chart_->peakStep >= 0) {
    const double x = xAxis().toPixel(double(chart_->peakStep) + 0.5);
    p.setPen(QPen(criticalColor(), 1, Qt::DashLine));
    p.drawLine(QPointF(x, blockArea.top()), QPointF(x, blockArea.bottom()));
  }
  p.restore();
}

void MemoryPlot::paintCurve(QPainter& p) const {
  const std::vector<int64_t>& live = chart_->live;
  p.save();
  p.setClipRect(curveArea_.adjusted(-1, -1, 1, 1));
  auto y = [&](double bytes) { return curveArea_.bottom() - bytes / curveMax_ * curveArea_.height(); };
  // One point per pixel column: the largest live value among the steps the column covers (the peak never
  // disappears between columns when zoomed out).
  QPainterPath path(QPointF(curveArea_.left(), curveArea_.bottom()));
  const int columns = int(curveArea_.width());
  const int64_t steps = int64_t(live.size());
  for (int c = 0; c <= columns && steps > 0; ++c) {
    const double px = curveArea_.left() + c;
    const int64_t s0 = std::clamp<int64_t>(int64_t(std::floor(xAxis().toData(px))), 0, steps - 1);
    const int64_t s1 = std::clamp<int64_t>(int64_t(std::floor(xAxis().toData(px + 1))), s0, steps - 1);
    int64_t v = 0;
    for (int64_t s = s0; s <= s1; ++s) v = std::max(v, live[size_t(s)]);
    path.lineTo(px, y(double(v)));
  }
  path.lineTo(curveArea_.right(), curveArea_.bottom());
  path.closeSubpath();
  const QColor text = palette().color(QPalette::Text);
  p.fillPath(path, towardsBase(text, palette(), 0.8));
  p.setPen(QPen(text, 1));
  p.drawPath(path);
  // The static memory GE measured, as a line over the same steps (its node indices).
  if (!chart_->measuredLive.empty()) {
    const std::vector<int64_t>& measured = chart_->measuredLive;
    const int64_t n = int64_t(measured.size());
    QPainterPath line;
    for (int c = 0; c <= columns; ++c) {
      const double px = curveArea_.left() + c;
      const int64_t s0 = std::clamp<int64_t>(int64_t(std::floor(xAxis().toData(px))), 0, n - 1);
      const int64_t s1 = std::clamp<int64_t>(int64_t(std::floor(xAxis().toData(px + 1))), s0, n - 1);
      int64_t v = 0;
      for (int64_t s = s0; s <= s1; ++s) v = std::max(v, measured[size_t(s)]);
      if (c == 0) line.moveTo(px, y(double(v)));
      else line.lineTo(px, y(double(v)));
    }
    p.setPen(QPen(measuredColor(), 2));
    p.drawPath(line);
    p.drawText(QRectF(curveArea_.left() + 4, curveArea_.top() + 2, curveArea_.width() - 8, 16),
               Qt::AlignLeft | Qt::AlignTop,
               QString("measured static memory (GE), peak %1").arg(bytesText(double(chart_->measuredPeak))));
  }
  p.setPen(QPen(text, 1, Qt::DotLine));
  const double arenaY = y(double(chart_->arenaBytes));
  p.drawLine(QPointF(curveArea_.left(), arenaY), QPointF(curveArea_.right(), arenaY));
  if (chart_->peakStep >= 0) {
    const double x = xAxis().toPixel(double(chart_->peakStep) + 0.5);
    const double py = y(double(chart_->lowerBound));
    p.setPen(QPen(criticalColor(), 1, Qt::DashLine));
    p.drawLine(QPointF(x, curveArea_.top()), QPointF(x, curveArea_.bottom()));
    p.setPen(Qt::NoPen);
    p.setBrush(criticalColor());
    p.drawEllipse(QPointF(x, py), 4, 4);
    const QString label = QString("peak %1 at step %L2").arg(bytesText(double(chart_->lowerBound))).arg(chart_->peakStep);
    const QFontMetricsF fm(font());
    const double w = fm.horizontalAdvance(label) + 8;
    // Right of the marker unless that runs off the plot.
    const double left = x + 8 + w > curveArea_.right() ? x - 8 - w : x + 8;
    const QRectF box(left, std::max(curveArea_.top(), py - fm.height() / 2), w, fm.height());
    p.fillRect(box, palette().color(QPalette::Base));
    p.setPen(criticalColor());
    p.drawText(box, Qt::AlignCenter, label);
  }
  p.restore();
}

void MemoryPlot::paintAxes(QPainter& p) const {
  const QRectF& blockArea = plotArea();
  const QColor text = palette().color(QPalette::Text);
  const QColor grid = towardsBase(text, palette(), 0.88);
  p.setPen(text);
  const QFontMetricsF fm(font());
  for (double v : bytes_.ticks(5, true)) {
    const double py = bytes_.toPixel(v);
    if (py < blockArea.top() - 1 || py > blockArea.bottom() + 1) continue;
    p.setPen(grid);
    p.drawLine(QPointF(blockArea.left() - 4, py), QPointF(blockArea.left(), py));
    p.setPen(text);
    p.drawText(QRectF(0, py - fm.height() / 2, kLeft - 8, fm.height()), Qt::AlignRight | Qt::AlignVCenter, bytesText(v));
  }
  double lastRight = -1e9;
  for (double v : xAxis().ticks(8)) {
    if (v != std::floor(v)) continue;  // steps are whole
    const double px = xAxis().toPixel(v);
    const QString label = QString("%L1").arg(int64_t(v));
    const double w = fm.horizontalAdvance(label);
    if (px - w / 2 < lastRight + 6 || px + w / 2 > width()) continue;
    p.drawLine(QPointF(px, blockArea.bottom()), QPointF(px, blockArea.bottom() + 4));
    p.drawText(QRectF(px - w / 2, blockArea.bottom() + 4, w, fm.height()), Qt::AlignCenter, label);
    lastRight = px + w / 2;
  }
  p.setPen(text);
  p.drawRect(blockArea);
  p.drawRect(curveArea_);
  p.drawText(QRectF(0, blockArea.bottom() + 4, kLeft - 8, fm.height()), Qt::AlignRight | Qt::AlignVCenter, "step →");
  p.drawText(QRectF(0, curveArea_.top(), kLeft - 8, fm.height()), Qt::AlignRight | Qt::AlignVCenter, "live bytes");
  p.drawText(QRectF(0, curveArea_.bottom() - fm.height(), kLeft - 8, fm.height()), Qt::AlignRight | Qt::AlignVCenter, "0");
}

int MemoryPlot::blockAt(QPointF pos) const {
  if (!chart_ || !plotArea().contains(pos)) return -1;
  // Topmost first: later blocks are drawn over earlier ones. A tiny block is found within two pixels.
  for (size_t i = chart_->blocks.size(); i-- > 0;)
    if (blockRect(chart_->blocks[i]).adjusted(-2, -2, 2, 2).contains(pos)) {
      const MemoryChartBlock& b = chart_->blocks[i];
      if (double(b.end) > xAxis().lo() && double(b.first) < xAxis().hi()) return int(i);
    }
  return -1;
}

QPoint MemoryPlot::blockCentre(size_t block) const {
  if (!chart_ || block >= chart_->blocks.size()) return {};
  return blockRect(chart_->blocks[block]).intersected(plotArea()).center().toPoint();
}

QString MemoryPlot::describe(size_t block) const {
  const MemoryChartBlock& b = chart_->blocks[block];
  QString stream = b.stream >= 0 ? QString::number(b.stream) : QString("—");
  return QString("<b>%1</b><br>produced by %2 (node %3), stream %4<br>%5 (%L6 bytes) at offset %L7<br>"
                 "live over steps %L8 – %L9 (%L10 steps)<br>reuse block %11")
      .arg(QString::fromStdString(b.name).toHtmlEscaped(), QString::fromStdString(b.producerOp).toHtmlEscaped())
      .arg(b.producerId)
      .arg(stream, bytesText(double(b.bytes)))
      .arg(b.bytes)
      .arg(b.offset)
      .arg(b.first)
      .arg(b.end - 1)
      .arg(b.end - b.first)
      .arg(b.reuseBlock);
}

void MemoryPlot::wheelY(QPointF pos, double notches) { bytes_.zoomAt(pos.y(), std::pow(kZoomStep, notches)); }

}  // namespace kiln::views
