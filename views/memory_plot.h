#pragma once
// The drawing of a memory plan: one rectangle per planned tensor (x = its lifetime in steps, y = its offset in the
// arena, height = its bytes), the arena size and the lower bound as horizontal lines, and below, on the same step
// axis, the live-bytes curve with its peak marked. Painted directly with culling (tens of thousands of tensors stay
// cheap: a rectangle outside the window costs one comparison, one under a pixel one fillRect). Navigated as every
// ChartPlot, with steps across; Ctrl+wheel zooms the bytes and ↑/↓ pan them. A click selects the tensor's producer.
#include <memory>
#include <vector>

#include "chart_plot.h"
#include "report/memory_chart.h"

namespace kiln::views {

class MemoryPlot final : public ChartPlot {
  Q_OBJECT
 public:
  enum class ColourBy { ReuseBlock, ProducerOp, Stream };

  explicit MemoryPlot(QWidget* parent = nullptr);

  void setChart(std::shared_ptr<const MemoryChart> chart);
  const MemoryChart* chart() const { return chart_.get(); }
  void setColourBy(ColourBy c);
  ColourBy colourBy() const { return colourBy_; }
  QColor blockColour(size_t block) const;

  std::vector<size_t> selectedBlocks() const { return selectedItems(); }

  // Index of the topmost block drawn at `pos`, -1 for none; the centre of a block's visible part (for tests).
  int blockAt(QPointF pos) const;
  QPoint blockCentre(size_t block) const;
  // Comparing two runs: the byte axis (and the live curve's) spans at least `bytes`, the larger arena of the two, so
  // equal heights mean equal bytes.
  void setByteExtentAtLeast(double bytes);
  void zoomSteps(double factor) { zoomX(factor); }

 signals:
  void blockClicked(int block, qint64 producerId);

 private:
  bool hasChart() const override { return chart_ != nullptr; }
  void paintChart(QPainter& p) const override;
  void layoutAreas() override;
  int itemAt(QPointF pos) const override { return blockAt(pos); }
  qint64 nodeOf(size_t block) const override { return chart_->blocks[block].producerId; }
  QString describe(size_t block) const override;
  bool inWindow(size_t block) const override;
  void bringIntoView(size_t block, bool selectionInWindow) override;
  void emitClicked(int block, qint64 producerId) override { emit blockClicked(block, producerId); }
  void fitY() override { bytes_.fit(); }
  void panY(double pixels) override { bytes_.panPixels(pixels); }
  void wheelY(QPointF pos, double notches) override;
  double keyStepY() const override { return plotArea().height() / 10; }

  void recolour();
  QRectF blockRect(const MemoryChartBlock& b) const;
  void paintBlocks(QPainter& p) const;
  void paintCurve(QPainter& p) const;
  void paintAxes(QPainter& p) const;

  std::shared_ptr<const MemoryChart> chart_;
  ColourBy colourBy_ = ColourBy::ReuseBlock;
  ChartAxis bytes_;
  QRectF curveArea_;  // below the blocks (the plot area), on the same step axis
  double curveMax_ = 1;
  std::vector<QColor> fill_;  // per block, for the current colouring (made when it changes, not per frame)
  double minBytes_ = 0;
};

}  // namespace kiln::views
