#include "fused_subgraph_view.h"

#include <QPushButton>
#include <QVBoxLayout>

#include "chart_pages.h"
#include "graph_canvas.h"
#include "util/units.h"

namespace kiln::views {

namespace {

QString bytesText(int64_t b) { return QString::fromStdString(formatBytes(double(b))); }

}  // namespace

FusedSubgraphView::FusedSubgraphView(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  pages_ = new ChartPages("Double-click a fused node (or its \"fused by\" row in the inspector) to see what it "
                          "replaced.",
                          "Fit the subgraph into the panel (F)", this);
  layout->addWidget(pages_);
  auto* go = new QPushButton("Go to fused node", pages_->chartPage());
  go->setToolTip("Select the fused node in the graph, at the pass that created it");
  pages_->addControl(go);
  canvas_ = new GraphCanvas(pages_->chartPage());
  pages_->body()->addWidget(canvas_, 1);
  connect(pages_->fitButton(), &QPushButton::clicked, canvas_, &GraphCanvas::zoomToFit);
  connect(go, &QPushButton::clicked, this, [this] { emit fusedNodeRequested(fused_.fusedNode, fused_.pass); });
  connect(canvas_, &GraphCanvas::nodeSelected, this, &FusedSubgraphView::nodeSelected);
}

void FusedSubgraphView::showFusion(const layout::FusionRecord& fusion, std::shared_ptr<const layout::PassView> view,
                                   int64_t select) {
  fused_ = fusion;
  const auto q = [](const std::string& s) { return QString::fromStdString(s); };
  summary_ = QString("%1 → %2 %3 (#%4) at pass %5  ·  %6 original nodes, drawn as after pass %7  ·  HBM saved %8%9")
                 .arg(q(fusion.rule), q(fusion.opType), q(fusion.name))
                 .arg(fusion.fusedNode)
                 .arg(fusion.pass)
                 .arg(fusion.replaced.size())
                 .arg(view->toPass)
                 .arg(bytesText(fusion.hbmBytesSaved))
                 .arg(fusion.unknownSizedTensors
                          ? QString(" + %1 tensors of dynamic size").arg(fusion.unknownSizedTensors)
                          : QString());
  pages_->showChart(summary_);
  canvas_->setPassView(std::move(view));
  if (select) canvas_->revealNode(select);
}

void FusedSubgraphView::showMessage(const QString& text) { pages_->showMessage(text); }
bool FusedSubgraphView::showsFusion() const { return pages_->showsChart(); }
QString FusedSubgraphView::message() const { return pages_->message(); }

}  // namespace kiln::views
