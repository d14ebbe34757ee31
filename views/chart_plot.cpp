#include "chart_plot.h"

#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>
#include <cmath>
#include <optional>

namespace kiln::views {

namespace {

// The keys keyPressEvent navigates with, without Ctrl/Alt/Meta: claimed from the window's shortcuts while the chart
// has the focus.
bool isChartNavigationKey(const QKeyEvent& e) {
  if (e.modifiers() & (Qt::ControlModifier | Qt::AltModifier | Qt::MetaModifier)) return false;
  switch (e.key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal:
    case Qt::Key_Minus:
    case Qt::Key_Left:
    case Qt::Key_Right:
    case Qt::Key_Up:
    case Qt::Key_Down:
    case Qt::Key_F:
    case Qt::Key_Home: return true;
    default: return false;
  }
}

}  // namespace

ChartPlot::ChartPlot(Qt::KeyboardModifier yWheelModifier, QWidget* parent)
    : QWidget(parent), yWheelModifier_(yWheelModifier) {
  setMouseTracking(true);
  setFocusPolicy(Qt::StrongFocus);
  setAttribute(Qt::WA_OpaquePaintEvent);
}

void ChartPlot::setPlotArea(const QRectF& area) {
  area_ = area;
  x_.setPixels(area_.left(), area_.right());
}

void ChartPlot::resetSelection(size_t items) {
  selected_.assign(items, 0);
  selectedNode_ = 0;
}

void ChartPlot::selectNode(qint64 nodeId) {
  selectedNode_ = nodeId;
  if (!hasChart()) return;
  std::optional<size_t> first;
  bool visible = false;
  for (size_t i = 0; i < selected_.size(); ++i) {
    selected_[i] = nodeId != 0 && nodeOf(i) == nodeId;
    if (!selected_[i]) continue;
    if (!first) first = i;
    visible = visible || inWindow(i);
  }
  if (first) bringIntoView(*first, visible);
  viewMoved();
}

std::vector<size_t> ChartPlot::selectedItems() const {
  std::vector<size_t> out;
  for (size_t i = 0; i < selected_.size(); ++i)
    if (selected_[i]) out.push_back(i);
  return out;
}

void ChartPlot::fit() {
  x_.fit();
  fitY();
  layoutAreas();
  viewMoved();
}

void ChartPlot::zoomX(double factor) {
  x_.zoomAt((area_.left() + area_.right()) / 2, factor);
  viewMoved();
}

void ChartPlot::panBy(QPointF pixels) {
  x_.panPixels(pixels.x());
  panY(pixels.y());
  viewMoved();
}

void ChartPlot::paintSelectionRim(QPainter& p, const QRectF& item) const {
  const QRectF r = item.adjusted(-1.5, -1.5, 1.5, 1.5);
  p.setBrush(Qt::NoBrush);
  p.setPen(QPen(palette().color(QPalette::Text), 4));
  p.drawRect(r);
  p.setPen(QPen(palette().color(QPalette::Highlight), 2));
  p.drawRect(r);
}

void ChartPlot::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().color(QPalette::Base));
  if (hasChart()) paintChart(p);
}

void ChartPlot::resizeEvent(QResizeEvent*) { layoutAreas(); }

bool ChartPlot::event(QEvent* e) {
  if (e->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(e);
    const int i = itemAt(help->pos());
    if (i >= 0) QToolTip::showText(help->globalPos(), describe(size_t(i)), this);
    else QToolTip::hideText();
    return true;
  }
  if (e->type() == QEvent::ShortcutOverride && isChartNavigationKey(*static_cast<QKeyEvent*>(e))) {
    // The window binds ←/→ (passes) and F (fit the graph): with the chart focused, its own keys win.
    e->accept();
    return true;
  }
  return QWidget::event(e);
}

void ChartPlot::wheelEvent(QWheelEvent* e) {
  const double notches = e->angleDelta().y() / 120.0;
  if (notches == 0) return;
  if (e->modifiers() & yWheelModifier_) wheelY(e->position(), notches);
  else x_.zoomAt(e->position().x(), std::pow(kZoomStep, notches));
  viewMoved();
  e->accept();
}

void ChartPlot::mousePressEvent(QMouseEvent* e) {
  pressAt_ = lastAt_ = e->position();
  dragging_ = e->button() == Qt::LeftButton;
}

void ChartPlot::mouseMoveEvent(QMouseEvent* e) {
  if (!dragging_) return;
  const QPointF moved = e->position() - lastAt_;
  lastAt_ = e->position();
  setCursor(Qt::ClosedHandCursor);
  panBy(moved);
}

void ChartPlot::mouseReleaseEvent(QMouseEvent* e) {
  unsetCursor();
  const bool click = dragging_ && (e->position() - pressAt_).manhattanLength() < 4;
  dragging_ = false;
  if (!click) return;
  const int i = itemAt(e->position());
  if (i < 0) return;
  const qint64 node = nodeOf(size_t(i));
  selectNode(node);
  emitClicked(i, node);
}

void ChartPlot::keyPressEvent(QKeyEvent* e) {
  const double stepX = area_.width() / 10;
  switch (e->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal: zoomX(kZoomStep); break;
    case Qt::Key_Minus: zoomX(1 / kZoomStep); break;
    case Qt::Key_Left: panBy({stepX, 0}); break;
    case Qt::Key_Right: panBy({-stepX, 0}); break;
    case Qt::Key_Up: panBy({0, keyStepY()}); break;
    case Qt::Key_Down: panBy({0, -keyStepY()}); break;
    case Qt::Key_F:
    case Qt::Key_Home: fit(); break;
    default: QWidget::keyPressEvent(e); return;
  }
  e->accept();
}

}  // namespace kiln::views
