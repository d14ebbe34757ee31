#include "minimap.h"

#include <QGraphicsScene>
#include <QGraphicsView>
#include <QMouseEvent>
#include <QPainter>

namespace kiln::views {

MiniMap::MiniMap(QGraphicsView* view) : QWidget(view), view_(view) {
  setFixedSize(180, 130);
  setCursor(Qt::PointingHandCursor);
  setToolTip("Overview — click or drag to move the view");
}

QRectF MiniMap::mapRect() const {
  const QRectF scene = view_->scene() ? view_->scene()->sceneRect() : QRectF();
  if (scene.isEmpty()) return {};
  const QRectF area = QRectF(rect()).adjusted(4, 4, -4, -4);
  const double s = std::min(area.width() / scene.width(), area.height() / scene.height());
  const QSizeF size(scene.width() * s, scene.height() * s);
  return QRectF(area.center() - QPointF(size.width() / 2, size.height() / 2), size);
}

void MiniMap::sceneChanged() {
  cache_ = QPixmap();
  update();
}

void MiniMap::paintEvent(QPaintEvent*) {
  QPainter p(this);
  QColor bg = palette().color(QPalette::Window);
  bg.setAlphaF(0.92);
  p.fillRect(rect(), bg);
  p.setPen(palette().color(QPalette::Mid));
  p.drawRect(rect().adjusted(0, 0, -1, -1));
  QGraphicsScene* scene = view_->scene();
  const QRectF target = mapRect();
  if (!scene || target.isEmpty()) return;
  if (cache_.isNull()) {
    cache_ = QPixmap(target.size().toSize() * devicePixelRatioF());
    cache_.setDevicePixelRatio(devicePixelRatioF());
    cache_.fill(Qt::transparent);
    QPainter cp(&cache_);
    cp.setRenderHint(QPainter::Antialiasing);
    scene->render(&cp, QRectF(QPointF(0, 0), target.size()), scene->sceneRect());
  }
  p.drawPixmap(target.topLeft(), cache_);
  // The visible part of the scene, framed.
  const QRectF visible = view_->mapToScene(view_->viewport()->rect()).boundingRect();
  const QRectF scene_ = scene->sceneRect();
  const double s = target.width() / scene_.width();
  QRectF frame((visible.left() - scene_.left()) * s + target.left(), (visible.top() - scene_.top()) * s + target.top(),
               visible.width() * s, visible.height() * s);
  p.setPen(QPen(palette().color(QPalette::Highlight), 1.5));
  QColor fill = palette().color(QPalette::Highlight);
  fill.setAlphaF(0.12);
  p.setBrush(fill);
  p.drawRect(frame.intersected(target.adjusted(-1, -1, 1, 1)));
}

void MiniMap::centerAt(QPointF pos) {
  const QRectF target = mapRect();
  QGraphicsScene* scene = view_->scene();
  if (!scene || target.isEmpty()) return;
  const QRectF sr = scene->sceneRect();
  const double s = target.width() / sr.width();
  view_->centerOn(QPointF((pos.x() - target.left()) / s + sr.left(), (pos.y() - target.top()) / s + sr.top()));
  update();
}

void MiniMap::mousePressEvent(QMouseEvent* e) { centerAt(e->position()); }
void MiniMap::mouseMoveEvent(QMouseEvent* e) {
  if (e->buttons() & Qt::LeftButton) centerAt(e->position());
}

}  // namespace kiln::views
