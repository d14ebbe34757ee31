#pragma once
// The drawing of a memory plan: one rectangle per planned tensor (x = its lifetime in steps, y = its offset in the
// arena, height = its bytes), the arena size and the lower bound as horizontal lines, and below, on the same step
// axis, the live-bytes curve with its peak marked. Painted directly with culling (tens of thousands of tensors stay
// cheap: a rectangle outside the window costs one comparison, one under a pixel one fillRect). Wheel zooms the steps
// (Ctrl+wheel the bytes), drag pans, +/- and the arrows do the same from the keyboard, F fits; hover shows a
// tensor's facts, a click selects it.
#include <QWidget>
#include <memory>
#include <vector>

#include "chart_axis.h"
#include "report/memory_chart.h"

namespace kiln::views {

class MemoryPlot : public QWidget {
  Q_OBJECT
 public:
  enum class ColourBy { ReuseBlock, ProducerOp, Stream };

  explicit MemoryPlot(QWidget* parent = nullptr);

  void setChart(std::shared_ptr<const MemoryChart> chart);
  const MemoryChart* chart() const { return chart_.get(); }
  void setColourBy(ColourBy c);
  ColourBy colourBy() const { return colourBy_; }
  QColor blockColour(size_t block) const;

  // Marks the blocks produced by `nodeId` (0 clears) and brings the first into view; emits nothing.
  void selectNode(qint64 nodeId);
  qint64 selectedNode() const { return selectedNode_; }
  std::vector<size_t> selectedBlocks() const;

  // Index of the topmost block drawn at `pos`, -1 for none; the centre of a block's visible part (for tests).
  int blockAt(QPointF pos) const;
  QPoint blockCentre(size_t block) const;
  void fit();
  // Comparing two runs: the byte axis (and the live curve's) spans at least `bytes`, the larger arena of the two, so
  // equal heights mean equal bytes.
  void setByteExtentAtLeast(double bytes);
  void zoomSteps(double factor);
  void panBy(QPointF pixels);

 signals:
  void blockClicked(int block, qint64 producerId);

 protected:
  void paintEvent(QPaintEvent*) override;
  void resizeEvent(QResizeEvent*) override;
  void wheelEvent(QWheelEvent* e) override;
  void mousePressEvent(QMouseEvent* e) override;
  void mouseMoveEvent(QMouseEvent* e) override;
  void mouseReleaseEvent(QMouseEvent* e) override;
  void keyPressEvent(QKeyEvent* e) override;
  bool event(QEvent* e) override;

 private:
  void layoutAreas();
  void recolour();
  QRectF blockRect(const MemoryChartBlock& b) const;
  void paintBlocks(QPainter& p) const;
  void paintCurve(QPainter& p) const;
  void paintAxes(QPainter& p) const;
  QString describe(const MemoryChartBlock& b) const;

  std::shared_ptr<const MemoryChart> chart_;
  ColourBy colourBy_ = ColourBy::ReuseBlock;
  ChartAxis steps_, bytes_;
  QRectF blockArea_, curveArea_;
  double curveMax_ = 1;
  qint64 selectedNode_ = 0;
  std::vector<char> selected_;
  std::vector<QColor> fill_;  // per block, for the current colouring (made when it changes, not per frame)
  DragOrClick drag_;
  double minBytes_ = 0;
};

}  // namespace kiln::views
