#include "graph_items.h"

#include <QApplication>
#include <QFontMetricsF>
#include <QPainter>
#include <QPainterPathStroker>
#include <QStyleOptionGraphicsItem>
#include <QtMath>

namespace kiln::views {

namespace {

constexpr double kMaxNameWidth = 180;

QPalette paletteOf(QWidget* w) { return w ? w->palette() : QApplication::palette(); }

QString elided(const QString& s, const QFont& f, double width) {
  return QFontMetricsF(f).elidedText(s, Qt::ElideMiddle, width);
}

QString shortName(const layout::PassViewNode& n) {
  // The last scope component is what distinguishes a node inside its group.
  const QString name = QString::fromStdString(n.name);
  const qsizetype slash = name.lastIndexOf('/');
  return slash >= 0 ? name.mid(slash + 1) : name;
}

QString opTitle(const layout::PassViewNode& n) {
  if (n.kind == layout::PassViewNode::Kind::Input) return "input";
  if (n.kind == layout::PassViewNode::Kind::Output) return "output";
  return n.domain.empty() ? QString::fromStdString(n.opType)
                          : QString::fromStdString(n.domain + ":" + n.opType);
}

void drawBadges(QPainter* p, const QRectF& r, const DiffCounts& d, const QFont& font) {
  QFont f = font;
  f.setPointSizeF(font.pointSizeF() * 0.8);
  p->setFont(f);
  double x = r.right() - 4;
  const std::pair<int, DiffState> badges[] = {
      {d.changed, DiffState::Changed}, {d.removed, DiffState::Removed}, {d.added, DiffState::Added}};
  for (const auto& [count, state] : badges) {
    if (!count) continue;
    const QString t = (state == DiffState::Added ? "+" : state == DiffState::Removed ? "−" : "~") + QString::number(count);
    const double w = QFontMetricsF(f).horizontalAdvance(t) + 8;
    const QRectF b(x - w, r.top() - 8, w, 14);
    p->setPen(Qt::NoPen);
    p->setBrush(diffColor(state));
    p->drawRoundedRect(b, 7, 7);
    p->setPen(Qt::white);  // on a saturated badge colour, white reads in both themes
    p->drawText(b, Qt::AlignCenter, t);
    x -= w + 3;
  }
}

}  // namespace

DiffState toDiffState(layout::NodeState s) {
  switch (s) {
    case layout::NodeState::Added: return DiffState::Added;
    case layout::NodeState::Changed: return DiffState::Changed;
    case layout::NodeState::Removed: return DiffState::Removed;
    case layout::NodeState::Unchanged: break;
  }
  return DiffState::Unchanged;
}

QSizeF nodeItemSize(const layout::PassViewNode& node, const QFont& font) {
  QFont bold = font;
  bold.setBold(true);
  const QFontMetricsF fm(font), bm(bold);
  const double w = std::max(bm.horizontalAdvance(opTitle(node)),
                            std::min(kMaxNameWidth, fm.horizontalAdvance(shortName(node))));
  if (node.kind != layout::PassViewNode::Kind::Op) return {std::max(60.0, w + 16), fm.height() * 2 + 8};
  return {std::max(70.0, w + 20), fm.height() * 2 + 12};
}

QSizeF groupItemSize(const QString& label, const QFont& font) {
  QFont bold = font;
  bold.setBold(true);
  const QFontMetricsF bm(bold);
  return {std::max(110.0, std::min(260.0, bm.horizontalAdvance(label)) + 36), bm.height() * 2 + 16};
}

// ------------------------------------------------------------------------------------------------ BoxItem

BoxItem::BoxItem(QRectF rect) : rect_(rect) {
  setFlag(ItemIsSelectable);
  setZValue(2);
}

// Room above for diff badges and around for the selection and match outlines.
QRectF BoxItem::boundingRect() const { return rect_.adjusted(-4, -12, 8, 8); }

void BoxItem::setMatched(bool m) {
  matched_ = m;
  update();
}

void BoxItem::paintMatch(QPainter* p, const QPalette& pal, double radius) const {
  if (!matched_) return;
  p->setPen(QPen(pal.color(QPalette::Highlight), 2, Qt::DotLine));
  p->setBrush(Qt::NoBrush);
  p->drawRoundedRect(rect_.adjusted(-3, -3, 3, 3), radius + 2, radius + 2);
}

// ------------------------------------------------------------------------------------------------ NodeItem

NodeItem::NodeItem(const layout::PassViewNode& node, QRectF rect) : BoxItem(rect), node_(node) {
  setAcceptHoverEvents(true);
  QString tip = QString::fromStdString(node.name) + "\n" + opTitle(node);
  if (!node.unit.empty()) tip += " · " + unitLabel(QString::fromStdString(node.unit));
  if (node.state == layout::NodeState::Added) tip += "\nadded by this pass";
  if (node.state == layout::NodeState::Removed) tip += "\nremoved by this pass";
  if (node.state == layout::NodeState::Changed) {
    QStringList ch;
    for (const auto& c : node.changes) ch << QString::fromStdString(c);
    tip += "\nchanged: " + ch.join(", ");
  }
  setToolTip(tip);
}

namespace {

// Zoomed out so far that a label would be a few pixels high: items draw plain boxes, without antialiasing or text.
// At that scale the text nobody can read was most of a paint's cost (over 50 ms with 2,000 nodes in view).
bool zoomedFarOut(const QPainter* p) {
  constexpr double kLegibleScale = 0.4;
  return QStyleOptionGraphicsItem::levelOfDetailFromTransform(p->worldTransform()) < kLegibleScale;
}

}  // namespace

void NodeItem::paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget* widget) {
  const QPalette pal = paletteOf(widget);
  const DiffState state = toDiffState(node_.state);
  const bool terminal = node_.kind != layout::PassViewNode::Kind::Op;
  p->setRenderHint(QPainter::Antialiasing, !zoomedFarOut(p));
  if (state == DiffState::Removed) p->setOpacity(0.45);
  QPen border(state == DiffState::Unchanged ? pal.color(QPalette::Mid) : diffColor(state),
              state == DiffState::Unchanged ? 1.0 : 2.5);
  if (state == DiffState::Removed) border.setStyle(Qt::DashLine);
  if (option->state & QStyle::State_Selected) border = QPen(pal.color(QPalette::Highlight), 3);
  p->setPen(border);
  const QColor fill = terminal ? pal.color(QPalette::AlternateBase)
                      : overlay_.isValid() ? overlay_
                                           : nodeFill(QString::fromStdString(node_.unit), pal);
  p->setBrush(fill);
  if (zoomedFarOut(p)) {
    p->drawRect(rect_);
    return;
  }
  const double radius = terminal ? rect_.height() / 2 : 5;
  p->drawRoundedRect(rect_, radius, radius);
  if (highlight_.isValid()) {  // a rule's ring, outside the diff border so both show
    p->setPen(QPen(highlight_, 3));
    p->setBrush(Qt::NoBrush);
    p->drawRoundedRect(rect_.adjusted(-4, -4, 4, 4), radius + 3, radius + 3);
  }
  paintMatch(p, pal, radius);
  // Text in the palette's text colour: fills are soft enough for it in light and dark themes; an overlay's ramp
  // runs from dark to light, so its text takes whichever of black and white reads on it.
  QFont f = widget ? widget->font() : QApplication::font();
  QFont bold = f;
  bold.setBold(true);
  p->setPen(overlay_.isValid() ? (overlay_.lightnessF() > 0.55 ? QColor(Qt::black) : QColor(Qt::white))
                               : pal.color(QPalette::Text));
  const QRectF text = rect_.adjusted(6, 4, -6, -4);
  p->setFont(bold);
  p->drawText(QRectF(text.left(), text.top(), text.width(), text.height() / 2), Qt::AlignCenter, opTitle(node_));
  p->setFont(f);
  p->drawText(QRectF(text.left(), text.center().y(), text.width(), text.height() / 2), Qt::AlignCenter,
              elided(shortName(node_), f, text.width()));
}

void NodeItem::setOverlay(const QColor& fill, const QString& what) {
  if (baseTip_.isNull()) baseTip_ = toolTip();
  overlay_ = fill;
  setToolTip(what.isEmpty() ? baseTip_ : baseTip_ + "\n" + what);
  update();
}

void NodeItem::setHighlight(const QColor& ring) {
  highlight_ = ring;
  update();
}

// ------------------------------------------------------------------------------------------------ GroupItem

GroupItem::GroupItem(int group, QString label, int64_t nodes, DiffCounts diff, QRectF rect)
    : BoxItem(rect), group_(group), label_(std::move(label)), nodes_(nodes), diff_(diff) {
  setToolTip(label_ + QString("\n%L1 nodes — double-click to open").arg(nodes_));
}

void GroupItem::paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget* widget) {
  const QPalette pal = paletteOf(widget);
  p->setRenderHint(QPainter::Antialiasing);
  // A stacked look says "several nodes in here".
  QPen border(pal.color(QPalette::Dark), 1.5);
  if (option->state & QStyle::State_Selected) border = QPen(pal.color(QPalette::Highlight), 3);
  if (zoomedFarOut(p)) {
    p->setRenderHint(QPainter::Antialiasing, false);
    p->setPen(border);
    p->setBrush(pal.color(QPalette::Button));
    p->drawRect(rect_);
    return;
  }
  p->setPen(QPen(pal.color(QPalette::Mid), 1));
  p->setBrush(pal.color(QPalette::AlternateBase));
  p->drawRoundedRect(rect_.translated(4, 4), 6, 6);
  p->setPen(border);
  p->setBrush(pal.color(QPalette::Button));
  p->drawRoundedRect(rect_, 6, 6);
  paintMatch(p, pal, 6);
  QFont f = widget ? widget->font() : QApplication::font();
  QFont bold = f;
  bold.setBold(true);
  p->setPen(pal.color(QPalette::ButtonText));
  const QRectF text = rect_.adjusted(8, 4, -8, -4);
  p->setFont(bold);
  p->drawText(QRectF(text.left(), text.top(), text.width(), text.height() / 2), Qt::AlignCenter,
              "▸ " + elided(label_, bold, text.width() - 16));
  p->setFont(f);
  p->drawText(QRectF(text.left(), text.center().y(), text.width(), text.height() / 2), Qt::AlignCenter,
              (nodes_ == 1 ? QString("1 node") : QString("%L1 nodes").arg(nodes_)));
  if (diff_.any()) drawBadges(p, rect_, diff_, f);
}

// ------------------------------------------------------------------------------------------------ ClusterItem

ClusterItem::ClusterItem(int group, QString label, QRectF rect) : group_(group), label_(std::move(label)), rect_(rect) {
  setToolTip(label_ + "\ndouble-click the title to close");
  setZValue(0);
  setFlag(QGraphicsItem::ItemUsesExtendedStyleOption);  // paint() gets the exposed rect: big groups draw what shows
}

QRectF ClusterItem::boundingRect() const { return rect_.adjusted(-1, -1, 1, 1); }

void ClusterItem::paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget* widget) {
  const QPalette pal = paletteOf(widget);
  QColor fill = pal.color(QPalette::AlternateBase);
  fill.setAlphaF(0.6);
  const QPen border(pal.color(QPalette::Mid), 1, Qt::DashLine);
  const QRectF seen = option ? option->exposedRect.adjusted(-2, -2, 2, 2) : rect_;
  if (seen.contains(rect_)) {
    p->setRenderHint(QPainter::Antialiasing);
    p->setPen(border);
    p->setBrush(fill);
    p->drawRoundedRect(rect_, 8, 8);
  } else {
    // An open group of thousands of nodes spans far more than the view: its whole rounded, dashed outline would
    // be stroked on every paint (seconds at that size). Only the part in view is drawn: the fill and the visible
    // stretch of each side, its dashes kept in phase with the side's start so they do not crawl while panning.
    p->fillRect(rect_.intersected(seen), fill);
    p->setPen(border);
    constexpr double kDashPeriod = 6;  // Qt::DashLine: 4 on, 2 off, in pen widths
    const auto side = [&](QPointF a, QPointF b) {
      if (a.y() == b.y()) {  // horizontal
        if (a.y() < seen.top() || a.y() > seen.bottom()) return;
        const double from = std::max(a.x(), a.x() + std::floor((seen.left() - a.x()) / kDashPeriod) * kDashPeriod);
        const double to = std::min(b.x(), seen.right());
        if (from < to) p->drawLine(QPointF(from, a.y()), QPointF(to, a.y()));
      } else {
        if (a.x() < seen.left() || a.x() > seen.right()) return;
        const double from = std::max(a.y(), a.y() + std::floor((seen.top() - a.y()) / kDashPeriod) * kDashPeriod);
        const double to = std::min(b.y(), seen.bottom());
        if (from < to) p->drawLine(QPointF(a.x(), from), QPointF(a.x(), to));
      }
    };
    side(rect_.topLeft(), rect_.topRight());
    side(rect_.bottomLeft(), rect_.bottomRight());
    side(rect_.topLeft(), rect_.bottomLeft());
    side(rect_.topRight(), rect_.bottomRight());
  }
  QFont f = widget ? widget->font() : QApplication::font();
  f.setBold(true);
  p->setFont(f);
  p->setPen(pal.color(QPalette::WindowText));
  const QRectF title(rect_.left() + 10, rect_.top() + 4, rect_.width() - 20, QFontMetricsF(f).height() + 2);
  if (title.intersects(seen)) p->drawText(title, Qt::AlignLeft | Qt::AlignTop, "▾ " + label_);
}

// ------------------------------------------------------------------------------------------------ EdgeItem

EdgeItem::EdgeItem(const QPainterPath& path, QPointF tip, QPointF from, DiffState state, const QPalette& palette)
    : QGraphicsPathItem(path) {
  QColor c = state == DiffState::Unchanged ? palette.color(QPalette::Dark) : diffColor(state);
  QPen pen(c, state == DiffState::Unchanged ? 1.2 : 2.0);
  if (state == DiffState::Removed) pen.setStyle(Qt::DashLine);
  setPen(pen);
  setAcceptHoverEvents(true);
  const QLineF dir(from, tip);
  const double angle = std::atan2(-dir.dy(), dir.dx());
  const double size = 8;
  arrow_ << tip
         << tip - QPointF(std::cos(angle - M_PI / 7) * size, -std::sin(angle - M_PI / 7) * size)
         << tip - QPointF(std::cos(angle + M_PI / 7) * size, -std::sin(angle + M_PI / 7) * size);
  setZValue(1);
}

QRectF EdgeItem::boundingRect() const { return QGraphicsPathItem::boundingRect().united(arrow_.boundingRect()).adjusted(-2, -2, 2, 2); }

QPainterPath EdgeItem::shape() const {
  // A wide stroke so hovering near an edge shows its tooltip.
  QPainterPathStroker s;
  s.setWidth(8);
  return s.createStroke(path());
}

void EdgeItem::paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) {
  p->setRenderHint(QPainter::Antialiasing);
  p->setPen(pen());
  p->setBrush(Qt::NoBrush);
  p->drawPath(path());
  p->setPen(Qt::NoPen);
  p->setBrush(pen().color());
  p->drawPolygon(arrow_);
}

}  // namespace kiln::views
