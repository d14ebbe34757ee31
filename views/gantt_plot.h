#pragma once
// The drawing of a simulated run: one lane per stream (or per unit), each task a bar from its start to its end,
// coloured by unit (lighter when memory-bound), the critical path outlined, event arrows from each EVENT_RECORD to
// its EVENT_WAITs across streams, and each lane's utilisation in its header. Painted directly: per lane only the
// tasks inside the time window are visited (binary search on start), and bars narrower than a pixel that fall on an
// already painted pixel are skipped, so tens of thousands of tasks pan smoothly. Navigated as every ChartPlot, with
// time across; Shift+wheel and ↑/↓ scroll the lanes. A click selects the task's node.
#include <memory>
#include <vector>

#include "chart_plot.h"
#include "report/timeline_chart.h"

namespace kiln::views {

class GanttPlot final : public ChartPlot {
  Q_OBJECT
 public:
  explicit GanttPlot(QWidget* parent = nullptr);

  void setChart(std::shared_ptr<const TimelineChart> chart);
  const TimelineChart* chart() const { return chart_.get(); }
  void setLanesByUnit(bool byUnit);
  bool lanesByUnit() const { return byUnit_; }
  const std::vector<TimelineChartLane>& lanes() const { return lanes_; }

  std::vector<size_t> selectedTasks() const { return selectedItems(); }

  int taskAt(QPointF pos) const;  // index into the chart's tasks, -1 for none
  QPoint taskCentre(size_t task) const;
  void zoomTime(double factor) { zoomX(factor); }
  double visibleFromUs() const { return xAxis().lo(); }
  double visibleToUs() const { return xAxis().hi(); }
  // Comparing two runs on one time scale: the time axis spans at least [0, us) (the longer run's latency), and the
  // visible window can be set from the other chart.
  void setTimeExtentAtLeast(double us);
  void setTimeWindow(double fromUs, double toUs);

 signals:
  void taskClicked(int task, qint64 nodeId);
  void timeWindowChanged(double fromUs, double toUs);  // after any zoom, pan or fit (not after setTimeWindow)

 private:
  bool hasChart() const override { return chart_ != nullptr; }
  void paintChart(QPainter& p) const override;
  void layoutAreas() override;
  int itemAt(QPointF pos) const override { return taskAt(pos); }
  qint64 nodeOf(size_t task) const override { return chart_->tasks[task].nodeId; }
  QString describe(size_t task) const override;
  bool inWindow(size_t task) const override;
  void bringIntoView(size_t task, bool selectionInWindow) override;
  void emitClicked(int task, qint64 nodeId) override { emit taskClicked(task, nodeId); }
  void fitY() override { scrollY_ = 0; }
  void panY(double pixels) override { scrollLanes(-pixels); }
  void wheelY(QPointF pos, double notches) override;
  double keyStepY() const override;
  void viewMoved() override;  // repaint, and report a changed time window

  void rebuildLanes();
  void scrollLanes(double pixels);
  double rowTop(size_t task) const;  // widget y of a task's row
  QRectF taskRect(size_t task) const;
  void paintLanes(QPainter& p) const;
  void paintArrows(QPainter& p) const;
  void paintHeader(QPainter& p) const;
  void paintTimeAxis(QPainter& p) const;

  std::shared_ptr<const TimelineChart> chart_;
  std::unordered_map<int64_t, layout::NodeTiming> timing_;  // per node, when measured tasks are beside simulated ones
  bool byUnit_ = false;
  std::vector<TimelineChartLane> lanes_;
  double header_ = 150;  // width of the lane names' column
  std::vector<double> laneTop_;      // content y of each lane
  std::vector<double> laneMaxUs_;    // longest task of each lane (how far back a visible task can start)
  std::vector<int> laneOfTask_, rowOfTask_;
  std::vector<QColor> fill_;         // per task: its unit's colour, lighter when memory-bound (made once, not per frame)
  double contentHeight_ = 0;
  double scrollY_ = 0;
  double minExtentUs_ = 0;
  double reportedLo_ = -1, reportedHi_ = -1;
};

}  // namespace kiln::views
