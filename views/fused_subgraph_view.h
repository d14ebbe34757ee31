#pragma once
// The fused-subgraph panel: what one fused node replaced, drawn as the nodes were in the pass recorded just before
// the fusion, under a line naming the rule, the fused node, the pass and the HBM traffic it saved. Selecting a node
// here emits it (the window shows it in the inspector from this panel's view); "Go to fused node" asks the window to
// select the fused node in the main graph.
#include <QWidget>
#include <memory>

#include "layout/fused_subgraph.h"
#include "layout/pass_view.h"

namespace kiln::views {

class ChartPages;
class GraphCanvas;

class FusedSubgraphView : public QWidget {
  Q_OBJECT
 public:
  explicit FusedSubgraphView(QWidget* parent = nullptr);

  // `view` from layout::buildFusedSubgraphView for `fusion`; `select`: an original node to select once laid out.
  void showFusion(const layout::FusionRecord& fusion, std::shared_ptr<const layout::PassView> view,
                  int64_t select = 0);
  void showMessage(const QString& text);
  bool showsFusion() const;
  QString message() const;
  int64_t fusedNode() const { return fused_.fusedNode; }
  QString summary() const { return summary_; }
  GraphCanvas* canvas() const { return canvas_; }

 signals:
  void nodeSelected(qint64 nodeId);           // in this panel's view (0: cleared)
  void fusedNodeRequested(qint64 fusedNode, int pass);  // "Go to fused node"

 private:
  ChartPages* pages_;
  GraphCanvas* canvas_;
  layout::FusionRecord fused_;
  QString summary_;
};

}  // namespace kiln::views
