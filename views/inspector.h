#pragma once
// The inspector: everything known about the selected node — op, name, engine and compute unit, attributes, fusion
// record, other annotations, what the selected pass changed on it, and each input and output tensor with shape,
// dtype, format and bytes. Later stages add their annotations (memory offset, lifetime, stream, simulated time);
// they appear here as recorded, without changes to this view.
#include <QWidget>
#include <memory>

#include <unordered_map>

#include "layout/fused_subgraph.h"
#include "layout/node_overlay.h"
#include "layout/pass_view.h"

class QTreeWidget;
class QLabel;

namespace kiln::views {

class Inspector : public QWidget {
  Q_OBJECT
 public:
  explicit Inspector(QWidget* parent = nullptr);
  void showNode(const layout::PassView& view, int64_t nodeId);
  // The run's fusions: a node some fusion absorbed gets an "absorbed into" row per fusion holding it.
  void setFusions(std::shared_ptr<const layout::FusionIndex> fusions);
  // Per node: simulated time, and measured time when a profile was imported beside the run (a "time" row).
  void setNodeTiming(std::unordered_map<int64_t, layout::NodeTiming> timing);
  void clear();
  // The text of every row, "key\tvalue" per line (for tests and copy).
  QString text() const;

 signals:
  void nodeLinkActivated(qint64 nodeId);  // a producer/consumer node was double-clicked
  // "fused by" or one of its replaced nodes was double-clicked: show what the fused node replaced (selecting
  // `originalNode` there, 0 for none).
  void fusionExpandRequested(qint64 fusedNode, qint64 originalNode);
  // An "absorbed into" row was double-clicked: go to the pass that created the fused node and select it.
  void absorberActivated(qint64 fusedNode, int pass);

 private:
  QLabel* title_;
  QTreeWidget* tree_;
  std::shared_ptr<const layout::FusionIndex> fusions_;
  std::unordered_map<int64_t, layout::NodeTiming> timing_;
};

}  // namespace kiln::views
