#pragma once
// What the memory plot and the Gantt plot share as a person uses them: a zoomable, pannable x axis over a plot
// area, items that belong to graph nodes, and the gestures. Wheel zooms x around the cursor (with the subclass's
// modifier it moves y instead), drag pans, +/- zoom about the centre, the arrows pan, F and Home fit; hover shows an
// item's facts, a click selects every item of its node. Subclasses own the data, the y direction and the painting,
// and answer the hooks below; the base keeps one copy of the selection and of every gesture, so the two charts
// cannot drift apart in how they are driven.
#include <QWidget>
#include <vector>

#include "chart_axis.h"

namespace kiln::views {

class ChartPlot : public QWidget {
  Q_OBJECT
 public:
  // Marks the items of `nodeId` (0 clears) and brings the first into view; emits no click.
  void selectNode(qint64 nodeId);
  qint64 selectedNode() const { return selectedNode_; }
  std::vector<size_t> selectedItems() const;

  void fit();
  void zoomX(double factor);  // about the centre of the plot area; factor > 1 zooms in
  void panBy(QPointF pixels);

 protected:
  // `yWheelModifier`: the modifier that turns the wheel from zooming x to wheelY().
  ChartPlot(Qt::KeyboardModifier yWheelModifier, QWidget* parent);

  static constexpr double kZoomStep = 1.25;  // one wheel notch or one +/- press

  ChartAxis& xAxis() { return x_; }
  const ChartAxis& xAxis() const { return x_; }
  const QRectF& plotArea() const { return area_; }
  void setPlotArea(const QRectF& area);  // maps the x axis onto it too
  void resetSelection(size_t items);     // a new chart: nothing selected
  bool isSelected(size_t item) const { return selected_[item] != 0; }
  // An item picked out over any fill at any zoom: the palette's highlight inside a text-coloured rim.
  void paintSelectionRim(QPainter& p, const QRectF& item) const;

  virtual bool hasChart() const = 0;
  virtual void paintChart(QPainter& p) const = 0;
  virtual void layoutAreas() = 0;  // after a resize or a fit
  virtual int itemAt(QPointF pos) const = 0;  // -1 for none, and without a chart
  virtual qint64 nodeOf(size_t item) const = 0;
  virtual QString describe(size_t item) const = 0;  // tooltip rich text
  virtual bool inWindow(size_t item) const = 0;     // inside the visible window
  // After selectNode: `selectionInWindow` says whether any marked item is already visible.
  virtual void bringIntoView(size_t item, bool selectionInWindow) = 0;
  virtual void emitClicked(int item, qint64 nodeId) = 0;  // the subclass's own click signal
  virtual void fitY() = 0;
  virtual void panY(double pixels) = 0;  // positive moves the content down
  virtual void wheelY(QPointF pos, double notches) = 0;
  virtual double keyStepY() const = 0;  // pixels one ↑/↓ press pans
  // After any zoom, pan, fit or selection: repaints; a subclass may also report the new window.
  virtual void viewMoved() { update(); }

  void paintEvent(QPaintEvent*) override;
  void resizeEvent(QResizeEvent*) override;
  void wheelEvent(QWheelEvent* e) override;
  void mousePressEvent(QMouseEvent* e) override;
  void mouseMoveEvent(QMouseEvent* e) override;
  void mouseReleaseEvent(QMouseEvent* e) override;
  void keyPressEvent(QKeyEvent* e) override;
  bool event(QEvent* e) override;

 private:
  ChartAxis x_;
  QRectF area_;
  Qt::KeyboardModifier yWheelModifier_;
  qint64 selectedNode_ = 0;
  std::vector<char> selected_;
  QPointF pressAt_, lastAt_;  // a left-button drag pans; a release within 4 px of the press is a click
  bool dragging_ = false;
};

}  // namespace kiln::views
