#pragma once
// The memory view of a compiled run: the plan drawn by MemoryPlot, a summary line (tensors, arena, lower bound,
// peak), a colour choice (reuse block, producer op type, stream) and the list of tensors alive at the peak, largest
// first. Clicking a block or a listed tensor emits its producer's node id; selectNode() marks a node's blocks
// without emitting, so the window can link it both ways with the graph canvas. A run without a memory plan shows a
// sentence saying why instead of an empty chart.
#include <QWidget>
#include <memory>

#include "report/memory_chart.h"

namespace kiln {
struct Model;
}

class QComboBox;
class QLabel;
class QListWidget;

namespace kiln::views {

class ChartPages;

class MemoryPlot;

class MemoryView : public QWidget {
  Q_OBJECT
 public:
  explicit MemoryView(QWidget* parent = nullptr);

  void setChart(std::shared_ptr<const MemoryChart> chart);
  void showMessage(const QString& text);  // instead of a chart
  const MemoryChart* chart() const;
  int blockCount() const;
  bool showsChart() const;
  QString message() const;
  QString summary() const;  // the line above the plan
  MemoryPlot* plot() const { return plot_; }
  QListWidget* peakList() const { return peak_; }
  void setColourBy(int index);  // the combo's order: reuse block, producer op type, stream
  // The compiled model the chart was drawn from: the Plan combo then replans its lifetimes with another planner
  // (on a worker thread) to show what that planner would have made of this graph. Null disables the combo.
  void setReplanSource(std::shared_ptr<const Model> compiled);
  // "" = the plan the compiler recorded, else a planner name (none, greedy_size, best_of, exact).
  void setPlanner(const QString& planner);
  bool replanning() const { return replanning_; }

 public slots:
  void selectNode(qint64 nodeId);

 signals:
  void nodeSelected(qint64 nodeId);

 private:
  void fillPeakList();

  ChartPages* pages_;
  QComboBox* colour_;
  QComboBox* planner_;
  std::shared_ptr<const Model> compiled_;
  std::shared_ptr<const MemoryChart> recorded_;  // the compiler's own plan, shown for "as compiled"
  bool replanning_ = false;
  uint64_t replanRequest_ = 0;
  void showChart(std::shared_ptr<const MemoryChart> chart);
  MemoryPlot* plot_;
  QListWidget* peak_;
  QLabel* peakTitle_;
};

}  // namespace kiln::views
