#pragma once
// The inspector: everything known about the selected node — op, name, engine and compute unit, attributes, fusion
// record, other annotations, what the selected pass changed on it, and each input and output tensor with shape,
// dtype, format and bytes. Later stages add their annotations (memory offset, lifetime, stream, simulated time);
// they appear here as recorded, without changes to this view.
#include <QWidget>

#include "layout/pass_view.h"

class QTreeWidget;
class QLabel;

namespace kiln::views {

class Inspector : public QWidget {
  Q_OBJECT
 public:
  explicit Inspector(QWidget* parent = nullptr);
  void showNode(const layout::PassView& view, int64_t nodeId);
  void clear();
  // The text of every row, "key\tvalue" per line (for tests and copy).
  QString text() const;

 signals:
  void nodeLinkActivated(qint64 nodeId);  // a producer/consumer/replaced node was double-clicked

 private:
  QLabel* title_;
  QTreeWidget* tree_;
};

}  // namespace kiln::views
