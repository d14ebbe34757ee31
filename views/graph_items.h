#pragma once
// The scene items of the graph canvas: an op node (or graph input/output), a closed group standing for its nodes,
// an open group drawn as a cluster around its items, and an edge. Items paint with the shared colour language
// (view_colors.h) and the widget's palette; they carry what the canvas needs to link selection back to ids.
#include <QGraphicsItem>
#include <QGraphicsPathItem>

#include "layout/pass_view.h"
#include "view_colors.h"

namespace kiln::views {

// Diff counts inside a closed group, shown as badges so a change is visible without opening it.
struct DiffCounts {
  int added = 0, removed = 0, changed = 0;
  bool any() const { return added || removed || changed; }
};

DiffState toDiffState(layout::NodeState s);

// What node and group items share: a selectable box that search can mark, with room above it for badges.
class BoxItem : public QGraphicsItem {
 public:
  explicit BoxItem(QRectF rect);
  QRectF boundingRect() const override;
  void setMatched(bool m);

 protected:
  // The dotted search-match outline, in the palette's highlight colour.
  void paintMatch(QPainter* p, const QPalette& pal, double radius) const;
  QRectF rect_;
  bool matched_ = false;
};

class NodeItem final : public BoxItem {
 public:
  enum { Type = UserType + 1 };
  NodeItem(const layout::PassViewNode& node, QRectF rect);
  int type() const override { return Type; }
  void paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget* widget) override;
  int64_t nodeId() const { return node_.id; }
  const layout::PassViewNode& node() const { return node_; }
  // An overlay's fill instead of the compute unit's, with what it means for the tooltip ("simulated time 12 µs");
  // a highlight rule's colour as a ring around the node. Invalid colours: none.
  void setOverlay(const QColor& fill, const QString& what);
  void setHighlight(const QColor& ring);
  const QColor& overlayFill() const { return overlay_; }
  const QColor& highlight() const { return highlight_; }

 private:
  layout::PassViewNode node_;
  QColor overlay_, highlight_;
  QString baseTip_;
};

class GroupItem final : public BoxItem {
 public:
  enum { Type = UserType + 2 };
  GroupItem(int group, QString label, int64_t nodes, DiffCounts diff, QRectF rect);
  int type() const override { return Type; }
  void paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget* widget) override;
  int group() const { return group_; }

 private:
  int group_;
  QString label_;
  int64_t nodes_;
  DiffCounts diff_;
};

class ClusterItem final : public QGraphicsItem {
 public:
  enum { Type = UserType + 3 };
  ClusterItem(int group, QString label, QRectF rect);
  int type() const override { return Type; }
  QRectF boundingRect() const override;
  void paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget* widget) override;
  int group() const { return group_; }

 private:
  int group_;
  QString label_;
  QRectF rect_;
};

class EdgeItem final : public QGraphicsPathItem {
 public:
  enum { Type = UserType + 4 };
  EdgeItem(const QPainterPath& path, QPointF tip, QPointF from, DiffState state, const QPalette& palette);
  int type() const override { return Type; }
  QRectF boundingRect() const override;
  QPainterPath shape() const override;
  void paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

 private:
  QPolygonF arrow_;
};

// Sizes an item needs for its text (points), used before layout.
QSizeF nodeItemSize(const layout::PassViewNode& node, const QFont& font);
QSizeF groupItemSize(const QString& label, const QFont& font);

}  // namespace kiln::views
