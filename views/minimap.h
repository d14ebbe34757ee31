#pragma once
// A small overview of the whole scene in the canvas corner with the visible area framed; click or drag to move
// the view there. The scene is rendered once per layout into a cached pixmap.
#include <QPixmap>
#include <QWidget>

class QGraphicsView;

namespace kiln::views {

class MiniMap : public QWidget {
  Q_OBJECT
 public:
  explicit MiniMap(QGraphicsView* view);
  void sceneChanged();  // re-render the cached overview

 protected:
  void paintEvent(QPaintEvent*) override;
  void mousePressEvent(QMouseEvent* e) override;
  void mouseMoveEvent(QMouseEvent* e) override;

 private:
  QRectF mapRect() const;  // where the scene is drawn inside the widget
  void centerAt(QPointF widgetPos);
  QGraphicsView* view_;
  QPixmap cache_;
};

}  // namespace kiln::views
