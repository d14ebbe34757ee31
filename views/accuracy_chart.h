#pragma once
// "Which pass changed the numbers", at a glance: one bar per verified pass, its height the log of the output's max
// abs error against the original (1e-9 .. 1), red where the pass is over tolerance, a marker on the first such pass
// and on the selected one. Clicking a bar selects that pass. Empty (with a hint) when the run was not verified.
#include <QWidget>
#include <vector>

#include "history/history_emulation.h"

namespace kiln::views {

class AccuracyChart : public QWidget {
  Q_OBJECT
 public:
  explicit AccuracyChart(QWidget* parent = nullptr);
  void setRows(std::vector<PassAccuracyRow> rows);  // in pass order
  void setCurrentPass(int seq);
  QSize sizeHint() const override { return {240, 64}; }

 signals:
  void passClicked(int seq);

 protected:
  void paintEvent(QPaintEvent*) override;
  void mousePressEvent(QMouseEvent* e) override;
  bool event(QEvent* e) override;  // tooltips per bar

 private:
  int barAt(double x) const;
  std::vector<PassAccuracyRow> rows_;
  int current_ = -1;
};

}  // namespace kiln::views
