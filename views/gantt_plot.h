#pragma once
// The drawing of a simulated run: one lane per stream (or per unit), each task a bar from its start to its end,
// coloured by unit (lighter when memory-bound), the critical path outlined, event arrows from each EVENT_RECORD to
// its EVENT_WAITs across streams, and each lane's utilisation in its header. Painted directly: per lane only the
// tasks inside the time window are visited (binary search on start), and bars narrower than a pixel that fall on an
// already painted pixel are skipped, so tens of thousands of tasks pan smoothly. Wheel zooms time (Shift+wheel
// scrolls the lanes), drag pans, +/- and the arrows do the same from the keyboard, F fits; hover shows a task's
// facts, a click selects its node.
#include <QWidget>
#include <memory>
#include <vector>

#include "chart_axis.h"
#include "report/timeline_chart.h"

namespace kiln::views {

class GanttPlot : public QWidget {
  Q_OBJECT
 public:
  explicit GanttPlot(QWidget* parent = nullptr);

  void setChart(std::shared_ptr<const TimelineChart> chart);
  const TimelineChart* chart() const { return chart_.get(); }
  void setLanesByUnit(bool byUnit);
  bool lanesByUnit() const { return byUnit_; }
  const std::vector<TimelineChartLane>& lanes() const { return lanes_; }

  // Marks the tasks of `nodeId` (0 clears) and brings the first into view; emits nothing.
  void selectNode(qint64 nodeId);
  qint64 selectedNode() const { return selectedNode_; }
  std::vector<size_t> selectedTasks() const;

  int taskAt(QPointF pos) const;  // index into the chart's tasks, -1 for none
  QPoint taskCentre(size_t task) const;
  void fit();
  void zoomTime(double factor);
  void panBy(QPointF pixels);
  double visibleFromUs() const { return time_.lo(); }
  double visibleToUs() const { return time_.hi(); }
  // Comparing two runs on one time scale: the time axis spans at least [0, us) (the longer run's latency), and the
  // visible window can be set from the other chart.
  void setTimeExtentAtLeast(double us);
  void setTimeWindow(double fromUs, double toUs);

 signals:
  void taskClicked(int task, qint64 nodeId);
  void timeWindowChanged(double fromUs, double toUs);  // after any zoom, pan or fit (not after setTimeWindow)

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
  void rebuildLanes();
  void windowMoved();  // repaint, and report a changed time window
  void layoutAreas();
  void scrollLanes(double pixels);
  double rowTop(size_t task) const;  // widget y of a task's row
  QRectF taskRect(size_t task) const;
  void paintLanes(QPainter& p) const;
  void paintArrows(QPainter& p) const;
  void paintHeader(QPainter& p) const;
  void paintTimeAxis(QPainter& p) const;
  QString describe(const TimelineChartTask& t) const;

  std::shared_ptr<const TimelineChart> chart_;
  bool byUnit_ = false;
  std::vector<TimelineChartLane> lanes_;
  std::vector<double> laneTop_;      // content y of each lane
  std::vector<double> laneMaxUs_;    // longest task of each lane (how far back a visible task can start)
  std::vector<int> laneOfTask_, rowOfTask_;
  std::vector<QColor> fill_;         // per task: its unit's colour, lighter when memory-bound (made once, not per frame)
  double contentHeight_ = 0;
  double scrollY_ = 0;
  ChartAxis time_;
  QRectF area_;  // where bars go
  qint64 selectedNode_ = 0;
  std::vector<char> selected_;
  DragOrClick drag_;
  double minExtentUs_ = 0;
  double reportedLo_ = -1, reportedHi_ = -1;
};

}  // namespace kiln::views
