#pragma once
// The pass navigator: stages → passes of one run, with each pass's time and node delta. "Hide passes that changed
// nothing" (on by default) and a filter box narrow the list; ←/→ step through the visible passes; a counter says
// "pass 17 of 64". Selecting a pass asks the canvas for the graph after it, compared with the pass before.
#include <QWidget>
#include <vector>

#include "history/history_reader.h"

class QTreeWidget;
class QTreeWidgetItem;
class QLineEdit;
class QCheckBox;
class QLabel;

namespace kiln::views {

class PassNavigator : public QWidget {
  Q_OBJECT
 public:
  explicit PassNavigator(QWidget* parent = nullptr);
  void setPasses(const std::vector<PassInfo>& passes);  // selects the last pass
  void selectPass(int seq);
  int currentPass() const { return current_; }
  // The pass recorded before `seq` (what a diff compares with), -1 for the imported graph.
  int previousPass(int seq) const;
  // Moves to the next/previous visible pass; false at either end.
  bool step(int delta);
  void setHideUnchanged(bool hide);
  void setFilter(const QString& text);
  QList<int> visiblePasses() const;

 signals:
  void passSelected(int seq);

 private:
  void rebuild();
  QTreeWidget* tree_;
  QLineEdit* filter_;
  QCheckBox* hideUnchanged_;
  QLabel* counter_;
  std::vector<PassInfo> passes_;
  int current_ = -1;
};

}  // namespace kiln::views
