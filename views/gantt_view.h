#pragma once
// The Gantt chart of a compiled run's simulated execution: GanttPlot with a summary line (latency, tasks, streams,
// where the timeline comes from), a legend and the choice between lanes per stream and lanes per unit. Clicking a
// task emits its node id; selectNode() marks a node's tasks without emitting, so the window links it both ways
// with the graph canvas and the inspector. A run without a task list shows a sentence saying why. A run with a
// measured profile beside it (kiln history import DB PROFILE --run N) draws the measured lanes above the simulated
// ones and lists, per node, measured beside simulated time, worst mismatch first; host gaps are named as such.
#include <QWidget>
#include <memory>

#include "report/timeline_chart.h"

class QCheckBox;
class QLabel;
class QTableWidget;

namespace kiln::views {

class ChartPages;

class GanttPlot;

class GanttView : public QWidget {
  Q_OBJECT
 public:
  explicit GanttView(QWidget* parent = nullptr);

  void setChart(std::shared_ptr<const TimelineChart> chart);
  void showMessage(const QString& text);
  const TimelineChart* chart() const;
  int taskCount() const;
  bool showsChart() const;
  QString message() const;
  GanttPlot* plot() const { return plot_; }
  // Measured beside simulated, per node, worst mismatch first (hidden when the run has no measured profile).
  QTableWidget* mismatchTable() const { return mismatch_; }
  void setLanesByUnit(bool on);

 public slots:
  void selectNode(qint64 nodeId);

 signals:
  void nodeSelected(qint64 nodeId);

 private:
  void fillMismatches(const TimelineChart& chart);
  ChartPages* pages_;
  QCheckBox* byUnit_;
  GanttPlot* plot_;
  QTableWidget* mismatch_;
};

}  // namespace kiln::views
