#include "graph_canvas.h"

#include <QGraphicsScene>
#include <QKeyEvent>
#include <QScrollBar>
#include <QWheelEvent>
#include <QtConcurrent>

#include "graph_items.h"
#include "overlay_legend.h"
#include "minimap.h"
#include "worker_pool.h"

namespace kiln::views {

using layout::NodeState;
using layout::PassViewNode;
using layout::ViewItem;

struct LayoutJob {
  layout::ViewGraph vg;
  std::shared_ptr<const layout::Layout> layout;
  std::string error;
};

struct GraphCanvas::Pending {
  QFutureWatcher<LayoutJob> watcher;
  uint64_t generation = 0;
  QString key;
};

GraphCanvas::GraphCanvas(QWidget* parent) : QGraphicsView(parent) {
  setScene(new QGraphicsScene(this));
  setDragMode(QGraphicsView::ScrollHandDrag);
  setRenderHint(QPainter::Antialiasing);
  setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
  setViewportUpdateMode(QGraphicsView::SmartViewportUpdate);
  setFocusPolicy(Qt::StrongFocus);
  minimap_ = new MiniMap(this);
  legend_ = new OverlayLegend(this);
  connect(scene(), &QGraphicsScene::selectionChanged, this, &GraphCanvas::onSelectionChanged);
}

GraphCanvas::~GraphCanvas() {
  // A layout still running on the pool finishes into a watcher nobody reads; wait so it cannot outlive us.
  if (pending_) pending_->watcher.waitForFinished();
  for (auto& p : abandoned_) p->watcher.waitForFinished();
}

void GraphCanvas::setPassView(std::shared_ptr<const layout::PassView> view) {
  const bool sameRun = view_ && view && view_->runId == view->runId;
  view_ = std::move(view);
  if (!view_) {
    scene()->clear();
    nodeItems_.clear();
    groupItems_.clear();
    return;
  }
  // Found with the view, off the UI thread (PassView::scopes); built here only for a view made without them.
  tree_ = view_->scopes ? *view_->scopes : layout::ScopeTree::build(layout::scopeNames(*view_));
  // Diff counts per group, once per view: each changed node counts in its group and every group above it (a
  // closed group's badges), so drawing a level costs nothing per group.
  nodeSizes_.clear();
  groupSizes_.clear();
  groupDiff_.assign(tree_.groups().size(), DiffCounts{});
  for (const auto& n : view_->nodes) {
    if (n.state == NodeState::Unchanged) continue;
    for (int g = tree_.groupOf(n.id); g >= 0; g = tree_.group(g).parent) {
      DiffCounts& d = groupDiff_[static_cast<size_t>(g)];
      if (n.state == NodeState::Added) ++d.added;
      if (n.state == NodeState::Removed) ++d.removed;
      if (n.state == NodeState::Changed) ++d.changed;
    }
  }
  if (!sameRun) fitNext_ = true;
  emit overlayMetricsChanged();
  relayout();
}

void GraphCanvas::openGroup(int group, bool open) {
  if (group <= 0 || group >= static_cast<int>(tree_.groups().size())) return;
  const std::string& path = tree_.group(group).path;
  if (open) openPaths_.insert(path);
  else {
    // Closing a group closes what is inside it too.
    for (auto it = openPaths_.begin(); it != openPaths_.end();)
      it = (*it == path || it->rfind(path + "/", 0) == 0) ? openPaths_.erase(it) : std::next(it);
  }
  relayout();
}

bool GraphCanvas::isGroupOpen(int group) const {
  return group > 0 && group < static_cast<int>(tree_.groups().size()) && openPaths_.count(tree_.group(group).path);
}

void GraphCanvas::revealNode(int64_t nodeId) {
  const int g = tree_.groupOf(nodeId);
  if (g < 0) return;
  bool changed = false;
  for (int a : tree_.ancestry(g)) changed |= openPaths_.insert(tree_.group(a).path).second;
  revealAfterLayout_ = nodeId;
  if (changed || pending_) {
    relayout();
    return;
  }
  if (QGraphicsItem* item = itemForNode(nodeId)) {
    scene()->clearSelection();
    item->setSelected(true);
    centerOn(item);
    revealAfterLayout_ = 0;
  }
}

QString GraphCanvas::cacheKey() const {
  QString key = QString("%1:%2:%3").arg(view_->runId).arg(view_->fromPass).arg(view_->toPass);
  for (const auto& p : openPaths_) key += "|" + QString::fromStdString(p);
  return key;
}

void GraphCanvas::relayout() {
  if (!view_) return;
  std::set<int> open;
  for (size_t g = 1; g < tree_.groups().size(); ++g)
    if (openPaths_.count(tree_.groups()[g].path)) open.insert(static_cast<int>(g));
  layout::ViewGraph vg = layout::buildViewGraph(tree_, view_->edges, open);
  const QString key = cacheKey();
  const uint64_t generation = ++generation_;
  if (auto it = cache_.find(key); it != cache_.end()) {
    pending_.reset();
    buildScene(vg, **it);
    return;
  }
  const auto groupLabel = [&](int64_t g) { return QString::fromStdString(tree_.group(static_cast<int>(g)).label); };
  std::vector<layout::ItemSize> sizes;
  sizes.reserve(vg.items.size());
  for (const ViewItem& item : vg.items) {
    QHash<int64_t, QSizeF>& known = item.kind == ViewItem::Kind::Node ? nodeSizes_ : groupSizes_;
    auto it = known.find(item.id);
    if (it == known.end())
      it = known.insert(item.id, item.kind == ViewItem::Kind::Node ? nodeItemSize(*view_->node(item.id), font())
                                                                   : groupItemSize(groupLabel(item.id), font()));
    const QSizeF s = *it;
    sizes.push_back({s.width(), s.height()});
  }
  if (pending_) disconnect(&pending_->watcher, nullptr, this, nullptr);
  auto job = std::make_unique<Pending>();
  job->generation = generation;
  job->key = key;
  connect(&job->watcher, &QFutureWatcher<LayoutJob>::finished, this, [this, generation] {
    if (!pending_ || pending_->generation != generation) return;  // superseded by a newer request
    LayoutJob result = pending_->watcher.result();
    const QString k = pending_->key;
    pending_.reset();
    if (!result.error.empty()) {
      emit layoutFailed(QString::fromStdString(result.error));
      return;
    }
    cache_.insert(k, result.layout);
    buildScene(result.vg, *result.layout);
  });
  latestGeneration_->store(generation);
  job->watcher.setFuture(QtConcurrent::run(workerPool(), [vg = std::move(vg), sizes = std::move(sizes), generation,
                                            latest = latestGeneration_]() mutable {
    LayoutJob out;
    // Several opens in a row queue several layouts; only the newest is shown, so the others are not laid out.
    if (latest->load() != generation) {
      out.error = "superseded";
      return out;
    }
    try {
      out.layout = std::make_shared<const layout::Layout>(layout::layoutWithDot(vg, sizes));
    } catch (const std::exception& e) {
      out.error = e.what();
    }
    out.vg = std::move(vg);
    return out;
  }));
  // The previous job (if any) is dropped from pending_ but may still run; keep it alive until it finishes.
  if (pending_) {
    auto* old = pending_.release();
    connect(&old->watcher, &QFutureWatcher<LayoutJob>::finished, this, [old] { delete old; });
    if (old->watcher.isFinished()) delete old;
  }
  pending_ = std::move(job);
  emit layoutStarted();
}

void GraphCanvas::buildScene(const layout::ViewGraph& vg, const layout::Layout& l) {
  const QPointF oldCentre = mapToScene(viewport()->rect().center());
  scene()->blockSignals(true);
  scene()->clear();
  scene()->blockSignals(false);
  nodeItems_.clear();
  groupItems_.clear();
  for (size_t c = 0; c < vg.clusters.size() && c < l.clusters.size(); ++c) {
    const auto& r = l.clusters[c];
    auto* item = new ClusterItem(vg.clusters[c], QString::fromStdString(tree_.group(vg.clusters[c]).label),
                                 QRectF(r.x, r.y, r.width, r.height));
    scene()->addItem(item);
  }
  std::vector<DiffState> itemState(vg.items.size(), DiffState::Unchanged);
  for (size_t i = 0; i < vg.items.size(); ++i) {
    const auto& r = l.items[i];
    const QRectF rect(r.x, r.y, r.width, r.height);
    if (vg.items[i].kind == ViewItem::Kind::Node) {
      const PassViewNode& n = *view_->node(vg.items[i].id);
      auto* item = new NodeItem(n, rect);
      itemState[i] = toDiffState(n.state);
      item->setMatched(matches_.contains(n.id));
      scene()->addItem(item);
      nodeItems_.insert(n.id, item);
    } else {
      const int g = static_cast<int>(vg.items[i].id);
      const auto& grp = tree_.group(g);
      auto* item =
          new GroupItem(g, QString::fromStdString(grp.label), grp.totalNodes, groupDiff_[static_cast<size_t>(g)], rect);
      scene()->addItem(item);
      groupItems_.insert(g, item);
    }
  }
  auto valueTip = [&](int64_t valueId, int count) {
    const ValueRow* v = view_->after.value(valueId);
    if (!v) v = view_->before.value(valueId);
    if (!v) return QString();
    QString tip = QString::fromStdString(v->name) + "\n" + QString::fromStdString(v->dtype) + " " +
                  QString::fromStdString(v->shape.value_or("?")) + "  " + QString::fromStdString(v->format);
    if (v->bytes) tip += QString("\n%L1 bytes").arg(*v->bytes);
    if (count > 1) tip += QString("\n(+%1 more tensors between these items)").arg(count - 1);
    return tip;
  };
  for (size_t e = 0; e < vg.edges.size() && e < l.edges.size(); ++e) {
    const auto& pts = l.edges[e];
    if (pts.size() < 2) continue;
    QPainterPath path(QPointF(pts[0].x, pts[0].y));
    size_t k = 1;
    for (; k + 2 < pts.size(); k += 3)
      path.cubicTo(QPointF(pts[k].x, pts[k].y), QPointF(pts[k + 1].x, pts[k + 1].y), QPointF(pts[k + 2].x, pts[k + 2].y));
    const QPointF last = path.currentPosition();
    QPointF tip = last, from = pts.size() >= 2 ? QPointF(pts[pts.size() - 2].x, pts[pts.size() - 2].y) : last;
    if (k < pts.size()) {  // the arrow end point Graphviz reports beyond the curve
      tip = QPointF(pts.back().x, pts.back().y);
      from = last;
      path.lineTo(tip);
    }
    // An edge touching a removed node is a ghost too; one into an added node is new.
    DiffState st = DiffState::Unchanged;
    const DiffState a = itemState[vg.edges[e].from], b = itemState[vg.edges[e].to];
    if (a == DiffState::Removed || b == DiffState::Removed) st = DiffState::Removed;
    else if (a == DiffState::Added || b == DiffState::Added) st = DiffState::Added;
    auto* edge = new EdgeItem(path, tip, from, st, palette());
    edge->setToolTip(valueTip(vg.edges[e].valueId, vg.edges[e].count));
    scene()->addItem(edge);
  }
  scene()->setSceneRect(QRectF(-40, -40, l.width + 80, l.height + 80));
  lastLayoutMs_ = l.ms;
  minimap_->sceneChanged();
  minimap_->setVisible(l.width > 400 || l.height > 400);

  if (revealAfterLayout_) {
    const int64_t id = revealAfterLayout_;
    revealAfterLayout_ = 0;
    if (QGraphicsItem* item = itemForNode(id)) {
      item->setSelected(true);
      centerOn(item);
    }
  } else if (fitNext_) {
    fitNext_ = false;
    showLegible();
  } else {
    // Keep the viewport on what changed (all of it when it fits, else where the change starts: its topmost
    // item); otherwise where the user was.
    QRectF changed, first;
    for (auto* item : scene()->items())
      if (item->type() == NodeItem::Type && static_cast<NodeItem*>(item)->node().state != NodeState::Unchanged) {
        const QRectF b = item->sceneBoundingRect();
        changed = changed.united(b);
        if (first.isNull() || b.top() < first.top() - 1 || (b.top() <= first.top() + 1 && b.left() < first.left()))
          first = b;
      }
    const QRectF visible = mapToScene(viewport()->rect()).boundingRect();
    if (changed.isEmpty())
      centerOn(oldCentre);
    else if (changed.width() <= visible.width() && changed.height() <= visible.height())
      centerOn(changed.center());
    else
      centerOn(first.center().x(), first.top() + visible.height() / 3);
  }
  if (selected_)
    if (QGraphicsItem* item = itemForNode(selected_)) item->setSelected(true);
  applyOverlays();
  emit layoutFinished(l.ms, static_cast<int>(vg.items.size()));
}

QGraphicsItem* GraphCanvas::itemForNode(int64_t nodeId) const { return nodeItems_.value(nodeId, nullptr); }

QList<int64_t> GraphCanvas::nodesInState(NodeState s) const {
  QList<int64_t> out;
  for (auto it = nodeItems_.begin(); it != nodeItems_.end(); ++it)
    if (static_cast<NodeItem*>(it.value())->node().state == s) out << it.key();
  std::sort(out.begin(), out.end());
  return out;
}

QList<int64_t> GraphCanvas::search(const QString& text) const {
  QList<int64_t> out;
  if (!view_ || text.trimmed().isEmpty()) return out;
  const QString t = text.trimmed();
  for (const auto& n : view_->nodes) {
    if (n.state == NodeState::Removed) continue;
    bool hit = QString::fromStdString(n.name).contains(t, Qt::CaseInsensitive) ||
               QString::fromStdString(n.opType).contains(t, Qt::CaseInsensitive);
    if (!hit)
      if (const NodeRow* row = view_->after.node(n.id))
        hit = QString::fromStdString(row->attrsJson).contains(t, Qt::CaseInsensitive);
    if (hit) out << n.id;
  }
  return out;
}

void GraphCanvas::setMatches(const QList<int64_t>& ids) {
  matches_ = ids;
  for (auto it = nodeItems_.begin(); it != nodeItems_.end(); ++it)
    static_cast<NodeItem*>(it.value())->setMatched(ids.contains(it.key()));
  for (auto it = groupItems_.begin(); it != groupItems_.end(); ++it) {
    bool inside = false;
    for (int64_t id : ids) {
      const int g = tree_.groupOf(id);
      if (g >= 0 && tree_.within(g, it.key())) {
        inside = true;
        break;
      }
    }
    static_cast<GroupItem*>(it.value())->setMatched(inside);
  }
}

void GraphCanvas::onSelectionChanged() {
  const auto items = scene()->selectedItems();
  if (items.isEmpty()) return;  // keep the inspector on the last selection while panning
  QGraphicsItem* item = items.first();
  if (item->type() == NodeItem::Type) {
    selected_ = static_cast<NodeItem*>(item)->nodeId();
    emit nodeSelected(selected_);
  } else if (item->type() == GroupItem::Type) {
    emit groupSelected(static_cast<GroupItem*>(item)->group());
  }
}

void GraphCanvas::zoomToFit() {
  if (!scene() || scene()->sceneRect().isEmpty()) return;
  fitInView(scene()->sceneRect(), Qt::KeepAspectRatio);
  // Never blow a tiny graph up past 1.5× nor shrink a huge one to dust: past that, pan.
  const double s = transform().m11();
  if (s > 1.5) setTransform(QTransform::fromScale(1.5, 1.5));
  if (s < 0.05) setTransform(QTransform::fromScale(0.05, 0.05));
  emit viewportMoved();
}

void GraphCanvas::setNodeTiming(std::unordered_map<int64_t, layout::NodeTiming> timing) {
  timing_ = std::move(timing);
  emit overlayMetricsChanged();
  applyOverlays();
}

QStringList GraphCanvas::overlayMetrics() const {
  QStringList out;
  if (!view_) return out;
  for (const std::string& m : layout::overlayMetrics(*view_, timing_)) out << QString::fromStdString(m);
  return out;
}

void GraphCanvas::setOverlay(const QString& metric) {
  overlayMetric_ = metric;
  applyOverlays();
}

void GraphCanvas::setHighlightRules(std::vector<layout::HighlightRule> rules) {
  rules_ = std::move(rules);
  applyOverlays();
}

void GraphCanvas::applyOverlays() {
  overlay_.reset();
  if (view_ && !overlayMetric_.isEmpty() && overlayMetrics().contains(overlayMetric_))
    overlay_ = layout::computeOverlay(*view_, timing_, overlayMetric_.toStdString());
  const layout::HighlightMatcher matcher(rules_);
  for (auto it = nodeItems_.begin(); it != nodeItems_.end(); ++it) {
    auto* item = static_cast<NodeItem*>(it.value());
    QColor fill;
    QString what;
    if (overlay_)
      if (const auto c = overlay_->colourOf(it.key())) {
        fill = toQColor(*c);
        if (overlay_->categorical) what = overlayMetric_ + ": " + QString::fromStdString(overlay_->categories.at(it.key()));
        else {
          const double v = overlay_->values.at(it.key());
          const double t = overlay_->hi > overlay_->lo ? (v - overlay_->lo) / (overlay_->hi - overlay_->lo) : 0;
          layout::Overlay exact = *overlay_;
          exact.logScale = false;
          what = overlayMetric_ + ": " + QString::fromStdString(exact.valueAt(t));
        }
      }
    item->setOverlay(fill, what);
    const NodeRow* row = view_ ? view_->after.node(it.key()) : nullptr;
    const auto ring = matcher.empty() ? std::nullopt : matcher.match(item->node(), row);
    item->setHighlight(ring ? toQColor(*ring) : QColor());
  }
  legend_->setOverlay(overlay_, int(rules_.size()));
  legend_->move(8, 8);
}

void GraphCanvas::showLegible() {
  if (!scene() || scene()->sceneRect().isEmpty()) return;
  // At 0.8 the canvas' 9-point labels still read as text; below it they blur into boxes.
  constexpr double kLegible = 0.8;
  const QRectF r = scene()->sceneRect();
  const double fit = std::min(viewport()->width() / r.width(), viewport()->height() / r.height());
  if (fit >= kLegible) {
    zoomToFit();
    return;
  }
  setTransform(QTransform::fromScale(kLegible, kLegible));
  const double halfW = viewport()->width() / (2 * kLegible), halfH = viewport()->height() / (2 * kLegible);
  // The inputs sit at the top of the layout: start there, horizontally on the topmost item (the first rank of a
  // wide or slanted layout may start anywhere across it; its left edge can be empty canvas).
  double x = r.center().x();
  if (r.width() > 2 * halfW) {
    QRectF top;
    for (QGraphicsItem* item : std::as_const(nodeItems_)) {
      const QRectF b = item->sceneBoundingRect();
      if (top.isNull() || b.top() < top.top() - 1 || (b.top() <= top.top() + 1 && b.left() < top.left())) top = b;
    }
    for (QGraphicsItem* item : std::as_const(groupItems_)) {
      const QRectF b = item->sceneBoundingRect();
      if (top.isNull() || b.top() < top.top() - 1 || (b.top() <= top.top() + 1 && b.left() < top.left())) top = b;
    }
    if (!top.isNull()) x = std::clamp(top.center().x(), r.left() + halfW, r.right() - halfW);
  }
  centerOn(QPointF(x, r.top() + halfH));
  emit viewportMoved();
}

void GraphCanvas::setFlat(bool flat) {
  if (flat == flat_) return;
  flat_ = flat;
  if (flat) {
    openBeforeFlat_ = openPaths_;
    for (size_t g = 1; g < tree_.groups().size(); ++g) openPaths_.insert(tree_.groups()[g].path);
  } else {
    openPaths_ = openBeforeFlat_;
  }
  fitNext_ = true;
  relayout();
}

bool GraphCanvas::cancelLayout() {
  if (!pending_) return false;
  disconnect(&pending_->watcher, nullptr, this, nullptr);
  // The worker cannot be interrupted inside Graphviz: it runs to its end, and its result is dropped.
  std::erase_if(abandoned_, [](const std::unique_ptr<Pending>& p) { return p->watcher.isFinished(); });
  abandoned_.push_back(std::move(pending_));
  ++generation_;
  if (flat_) {
    flat_ = false;
    openPaths_ = openBeforeFlat_;
    relayout();
  }
  emit layoutCancelled();
  return true;
}

void GraphCanvas::syncTo(const GraphCanvas* other) {
  setTransform(other->transform());
  centerOn(other->mapToScene(other->viewport()->rect().center()));
}

void GraphCanvas::wheelEvent(QWheelEvent* e) {
  const double factor = std::pow(1.0015, e->angleDelta().y());
  const double s = transform().m11() * factor;
  if (s < 0.02 || s > 8) return;
  scale(factor, factor);
  emit viewportMoved();
}

void GraphCanvas::keyPressEvent(QKeyEvent* e) {
  switch (e->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal: scale(1.25, 1.25); emit viewportMoved(); return;
    case Qt::Key_Minus: scale(0.8, 0.8); emit viewportMoved(); return;
    case Qt::Key_F: zoomToFit(); return;
    case Qt::Key_N: stepChange(e->modifiers() & Qt::ShiftModifier ? -1 : 1); return;
    case Qt::Key_Up:
    case Qt::Key_Down:
      if (moveSelection(e->key() == Qt::Key_Up ? QPointF(0, -1) : QPointF(0, 1))) return;
      break;
    case Qt::Key_Left:
    case Qt::Key_Right:
      // Plain ←/→ step passes (a window shortcut); with Ctrl they move the selection sideways.
      if ((e->modifiers() & Qt::ControlModifier) &&
          moveSelection(e->key() == Qt::Key_Left ? QPointF(-1, 0) : QPointF(1, 0)))
        return;
      break;
    case Qt::Key_Return:
    case Qt::Key_Enter: {
      const auto items = scene()->selectedItems();
      if (!items.isEmpty() && items.first()->type() == GroupItem::Type) {
        openGroup(static_cast<GroupItem*>(items.first())->group(), true);
        return;
      }
      if (!items.isEmpty() && items.first()->type() == NodeItem::Type) {
        emit nodeActivated(static_cast<NodeItem*>(items.first())->node().id);
        return;
      }
      break;
    }
    default: break;
  }
  QGraphicsView::keyPressEvent(e);
}

bool GraphCanvas::moveSelection(QPointF direction) {
  const auto selected = scene()->selectedItems();
  if (selected.isEmpty()) return false;
  const QPointF from = selected.first()->sceneBoundingRect().center();
  QGraphicsItem* best = nullptr;
  double bestScore = 0;
  for (QGraphicsItem* item : scene()->items()) {
    if (item == selected.first() || (item->type() != NodeItem::Type && item->type() != GroupItem::Type)) continue;
    const QPointF d = item->sceneBoundingRect().center() - from;
    const double along = d.x() * direction.x() + d.y() * direction.y();
    const double across = std::abs(d.x() * direction.y() - d.y() * direction.x());
    if (along <= 1 || across > along * 2) continue;  // roughly in that direction (within ~63°)
    const double score = along + 2 * across;          // prefer straight ahead
    if (!best || score < bestScore) {
      best = item;
      bestScore = score;
    }
  }
  if (!best) return true;  // at the edge: swallow the key rather than scroll away from the selection
  scene()->clearSelection();
  best->setSelected(true);
  ensureVisible(best, 40, 40);
  return true;
}

void GraphCanvas::stepChange(int delta) {
  // Drawn nodes the diff marks, in reading order (top to bottom, left to right).
  QList<QGraphicsItem*> changed;
  for (auto it = nodeItems_.begin(); it != nodeItems_.end(); ++it)
    if (static_cast<NodeItem*>(it.value())->node().state != NodeState::Unchanged) changed << it.value();
  if (changed.isEmpty()) return;
  std::sort(changed.begin(), changed.end(), [](QGraphicsItem* a, QGraphicsItem* b) {
    const QPointF pa = a->sceneBoundingRect().center(), pb = b->sceneBoundingRect().center();
    return pa.y() != pb.y() ? pa.y() < pb.y() : pa.x() < pb.x();
  });
  const auto selected = scene()->selectedItems();
  qsizetype at = selected.isEmpty() ? -1 : changed.indexOf(selected.first());
  at = at < 0 ? (delta > 0 ? 0 : changed.size() - 1) : (at + delta + changed.size()) % changed.size();
  scene()->clearSelection();
  changed[at]->setSelected(true);
  centerOn(changed[at]);
}

void GraphCanvas::mouseDoubleClickEvent(QMouseEvent* e) {
  for (QGraphicsItem* item : items(e->pos())) {
    if (item->type() == GroupItem::Type) {
      openGroup(static_cast<GroupItem*>(item)->group(), true);
      return;
    }
    if (item->type() == ClusterItem::Type) {
      openGroup(static_cast<ClusterItem*>(item)->group(), false);
      return;
    }
    if (item->type() == NodeItem::Type) {
      emit nodeActivated(static_cast<NodeItem*>(item)->node().id);
      return;
    }
  }
  QGraphicsView::mouseDoubleClickEvent(e);
}

void GraphCanvas::resizeEvent(QResizeEvent* e) {
  QGraphicsView::resizeEvent(e);
  minimap_->move(width() - minimap_->width() - 12 - verticalScrollBar()->width() * verticalScrollBar()->isVisible(),
                 height() - minimap_->height() - 12 - horizontalScrollBar()->height() * horizontalScrollBar()->isVisible());
}

void GraphCanvas::scrollContentsBy(int dx, int dy) {
  QGraphicsView::scrollContentsBy(dx, dy);
  minimap_->update();
  emit viewportMoved();
}

}  // namespace kiln::views
