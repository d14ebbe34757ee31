#pragma once
// Two runs side by side — two option sets on one model, or two models: the metrics table (A, B and B − A, the
// difference coloured better/worse), the compiled graphs next to each other with synced viewports and selection
// (nodes matched by id on the same model, else by name, op and shape: layout::matchNode), and the memory plans and
// timelines one above the other on one byte scale and one time scale (zoom and pan one timeline, the other follows).
#include <QWidget>
#include <memory>

#include "layout/pass_view.h"
#include "report/run_charts.h"
#include "report/run_comparison.h"

class QLabel;
class QTableWidget;

namespace kiln::views {

class GraphCanvas;
class GanttView;
class MemoryView;

struct CompareSide {
  QString title;  // "bert-base.onnx · run 3 · O1"
  RunCharts charts;
  std::shared_ptr<const layout::PassView> view;  // the graph after the run's last pass
  QString error;  // why the graph could not be read
};

class RunCompareView : public QWidget {
  Q_OBJECT
 public:
  explicit RunCompareView(QWidget* parent = nullptr);

  void setRuns(const CompareSide& a, const CompareSide& b, bool sameModel);
  const std::vector<MetricComparison>& rows() const { return rows_; }
  QTableWidget* metricsTable() const { return table_; }
  GraphCanvas* canvas(int side) const { return side == 0 ? canvasA_ : canvasB_; }
  MemoryView* memoryView(int side) const { return side == 0 ? memoryA_ : memoryB_; }
  GanttView* ganttView(int side) const { return side == 0 ? ganttA_ : ganttB_; }
  // The row of `metric` in the table, -1 when absent.
  int rowOf(const QString& metric) const;

 private:
  void selectOn(int side, qint64 nodeId);  // a node chosen on `side`: matched and shown on the other

  QLabel* titleA_;
  QLabel* titleB_;
  QTableWidget* table_;
  GraphCanvas* canvasA_;
  GraphCanvas* canvasB_;
  MemoryView* memoryA_;
  MemoryView* memoryB_;
  GanttView* ganttA_;
  GanttView* ganttB_;
  std::vector<MetricComparison> rows_;
  bool sameModel_ = true;
  bool syncing_ = false;
};

// "12.5 MiB", "1.85 ms", "37.2%", "42": a metric's value as the table shows it.
QString metricText(const std::string& unit, double v);

}  // namespace kiln::views
