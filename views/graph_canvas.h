#pragma once
// The graph canvas: the graph after one pass, grouped by name scope, laid out by Graphviz on a worker thread, with
// the diff against the compared pass drawn over it (added green, changed amber, removed as grey ghosts). Layouts are
// cached per (run, pass, compared pass, open groups). Double-click (or Enter) opens a group, double-click on an open
// group's title closes it; wheel/+/- zoom, F fits; ↑/↓ and Ctrl+←/→ move the selection to the nearest item that
// way, N / Shift+N jump between changed nodes; a minimap sits in the corner. Search finds nodes by name, op type or attribute value and opens the
// groups on the way to a match.
#include <QFutureWatcher>
#include <QGraphicsView>
#include <QHash>
#include <atomic>
#include <memory>
#include <optional>
#include <unordered_map>
#include <set>
#include <vector>

#include "graph_items.h"
#include "layout/dot_layout.h"
#include "layout/node_overlay.h"
#include "layout/pass_view.h"
#include "layout/scope_tree.h"

namespace kiln::views {

class MiniMap;

class GraphCanvas : public QGraphicsView {
  Q_OBJECT
 public:
  explicit GraphCanvas(QWidget* parent = nullptr);
  ~GraphCanvas() override;

  // Shows `view` (keeps the groups that were open, by path). Layout happens on a worker thread.
  void setPassView(std::shared_ptr<const layout::PassView> view);
  std::shared_ptr<const layout::PassView> passView() const { return view_; }
  const layout::ScopeTree& scopes() const { return tree_; }

  void openGroup(int group, bool open);
  bool isGroupOpen(int group) const;
  // Opens every group on the way to the node and selects it once laid out.
  void revealNode(int64_t nodeId);
  int64_t selectedNode() const { return selected_; }

  // Node ids whose name, op type or attributes contain `text` (case-insensitive), in view order.
  QList<int64_t> search(const QString& text) const;
  void setMatches(const QList<int64_t>& ids);  // highlighted

  bool layoutPending() const { return pending_ != nullptr; }
  double lastLayoutMs() const { return lastLayoutMs_; }
  // Ids of the nodes drawn with each diff state right now (closed groups hide theirs): for tests and the status bar.
  QList<int64_t> nodesInState(layout::NodeState s) const;
  QGraphicsItem* itemForNode(int64_t nodeId) const;
  void zoomToFit();
  // The first view of a graph: fitted when its text stays legible that way, else at a legible zoom showing its
  // start (the inputs, at the top), to scroll from — not the whole graph shrunk to a strip.
  void showLegible();
  // Flat: every group open, the whole graph in one layout (long on big graphs; cancelLayout() stops waiting for it
  // and goes back to the groups the user had open).
  void setFlat(bool flat);
  bool flat() const { return flat_; }
  // Drops the layout in flight, if any (the worker's result is discarded); true when there was one.
  bool cancelLayout();
  // Keyboard navigation: moves the selection to the nearest item in `direction` (unit vector); false when nothing
  // is selected. stepChange(±1) selects the next/previous node the diff marks (N / Shift+N).
  bool moveSelection(QPointF direction);
  void stepChange(int delta);
  void syncTo(const GraphCanvas* other);  // same centre and zoom (side-by-side compare)

  // Overlays (layout/node_overlay): nodes coloured by `metric` instead of their compute unit ("" = plain), the
  // run's simulated per-node timing feeding "simulated time" and "bytes moved"; highlight rules ring the nodes
  // they match. Kept across passes and relayouts; a legend in the corner gives the scale.
  void setNodeTiming(std::unordered_map<int64_t, layout::NodeTiming> timing);
  void setOverlay(const QString& metric);
  QString overlay() const { return overlayMetric_; }
  QStringList overlayMetrics() const;
  void setHighlightRules(std::vector<layout::HighlightRule> rules);
  const std::optional<layout::Overlay>& currentOverlay() const { return overlay_; }

 signals:
  void nodeSelected(qint64 nodeId);  // 0 when the selection is cleared or is a group
  void nodeActivated(qint64 nodeId);  // a node was double-clicked, or Enter pressed on it
  void groupSelected(int group);
  void layoutStarted();
  void layoutFinished(double ms, int items);
  void layoutFailed(const QString& message);
  void layoutCancelled();
  void overlayMetricsChanged();  // the metrics offered changed (another run, its timing arrived)
  void viewportMoved();

 protected:
  void wheelEvent(QWheelEvent* e) override;
  void keyPressEvent(QKeyEvent* e) override;
  void mouseDoubleClickEvent(QMouseEvent* e) override;
  void resizeEvent(QResizeEvent* e) override;
  void scrollContentsBy(int dx, int dy) override;

 private:
  struct Pending;
  void relayout();
  void applyOverlays();
  void buildScene(const layout::ViewGraph& vg, const layout::Layout& l);
  QString cacheKey() const;
  void onSelectionChanged();

  std::shared_ptr<const layout::PassView> view_;
  layout::ScopeTree tree_;
  std::set<std::string> openPaths_;
  QHash<QString, std::shared_ptr<const layout::Layout>> cache_;
  std::unique_ptr<Pending> pending_;
  std::vector<std::unique_ptr<Pending>> abandoned_;  // cancelled layouts still running on the pool
  uint64_t generation_ = 0;
  // The newest layout request, read by queued jobs so a superseded one is skipped instead of laid out.
  std::shared_ptr<std::atomic<uint64_t>> latestGeneration_ = std::make_shared<std::atomic<uint64_t>>(0);
  std::vector<DiffCounts> groupDiff_;
  // Item sizes measured once per view (text shaping of thousands of labels is most of a relayout's UI time).
  QHash<int64_t, QSizeF> nodeSizes_, groupSizes_;  // per group of tree_: what the pass changed inside it (badges)
  int64_t selected_ = 0;
  int64_t revealAfterLayout_ = 0;
  QList<int64_t> matches_;
  double lastLayoutMs_ = 0;
  bool fitNext_ = true;
  bool flat_ = false;
  std::set<std::string> openBeforeFlat_;
  MiniMap* minimap_ = nullptr;
  class OverlayLegend* legend_ = nullptr;
  std::unordered_map<int64_t, layout::NodeTiming> timing_;
  QString overlayMetric_;
  std::optional<layout::Overlay> overlay_;
  std::vector<layout::HighlightRule> rules_;
  QHash<qint64, QGraphicsItem*> nodeItems_;
  QHash<int, QGraphicsItem*> groupItems_;
};

}  // namespace kiln::views
