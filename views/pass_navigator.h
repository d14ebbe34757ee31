#pragma once
// The pass navigator: stages → passes of one run, with each pass's time and node delta. "Hide passes that changed
// nothing" (on by default) and a filter box narrow the list; ←/→ step through the visible passes; a counter says
// "pass 17 of 64". Selecting a pass asks the canvas for the graph after it, compared with the pass before. When
// the run's numerics were verified (pass_accuracy rows), an "error" column and a small chart show each pass's error
// against the original, the first pass over tolerance marked.
#include <QWidget>
#include <map>
#include <vector>

#include "history/history_emulation.h"
#include "history/history_reader.h"

class QTreeWidget;
class QTreeWidgetItem;
class QLineEdit;
class QCheckBox;
class QLabel;

namespace kiln::views {
class AccuracyChart;
}

namespace kiln::views {

class PassNavigator : public QWidget {
  Q_OBJECT
 public:
  explicit PassNavigator(QWidget* parent = nullptr);
  void setPasses(const std::vector<PassInfo>& passes);  // selects the last pass
  // The run's verification rows (empty: not verified; the column and chart say so).
  void setAccuracy(const std::vector<PassAccuracyRow>& rows);
  // The first pass over tolerance, -1 when none (or not verified).
  int firstExceeding() const;
  void selectPass(int seq);
  int currentPass() const { return current_; }
  // The pass recorded before `seq` (what a diff compares with), -1 for the imported graph.
  int previousPass(int seq) const;
  // Moves to the next/previous visible pass; false at either end.
  bool step(int delta);
  void setHideUnchanged(bool hide);
  void setFilter(const QString& text);
  QList<int> visiblePasses() const;
  QString counterText() const;
  // The width at which every pass name of the standard pipeline (and of the passes shown) is whole beside the
  // other columns: the dock's default width. Narrower, names elide in the middle (RefineRunning…Precision).
  int preferredWidth() const;

 signals:
  void passSelected(int seq);

 private:
  void rebuild();
  void updateCounter();
  QTreeWidget* tree_;
  QLineEdit* filter_;
  QCheckBox* hideUnchanged_;
  QLabel* counter_;
  AccuracyChart* chart_;
  std::vector<PassInfo> passes_;
  std::map<int, PassAccuracyRow> accuracy_;  // by pass seq
  int current_ = -1;
};

}  // namespace kiln::views
