#include "export_files.h"

#include <QFile>
#include <QFileInfo>
#include <QGraphicsScene>
#include <QImage>
#include <QPainter>
#include <QSvgGenerator>
#include <algorithm>
#include <cmath>

namespace kiln::views {

namespace {

constexpr double kMaxSide = 16384, kMaxPixels = 200e6;

}  // namespace

QString exportSceneImage(QGraphicsScene& scene, const QString& path) {
  const QRectF source = scene.itemsBoundingRect().adjusted(-20, -20, 20, 20);
  if (source.isEmpty()) return path + ": nothing to export (the graph is empty)";
  const QString suffix = QFileInfo(path).suffix().toLower();
  if (suffix == "svg") {
    QSvgGenerator svg;
    svg.setFileName(path);
    svg.setSize(source.size().toSize());
    svg.setViewBox(QRectF(QPointF(0, 0), source.size()));
    svg.setTitle(QFileInfo(path).completeBaseName());
    svg.setDescription("Exported by Kiln");
    QPainter p;
    if (!p.begin(&svg)) return path + ": cannot write";
    scene.render(&p, QRectF(QPointF(0, 0), source.size()), source);
    p.end();
    return QFileInfo(path).size() > 0 ? QString() : path + ": cannot write";
  }
  if (suffix != "png") return path + ": choose a .svg or .png file name";
  const double fit = std::min({2.0, kMaxSide / source.width(), kMaxSide / source.height(),
                               std::sqrt(kMaxPixels / (source.width() * source.height()))});
  QImage image((source.size() * fit).toSize(), QImage::Format_ARGB32_Premultiplied);
  if (image.isNull()) return path + ": the image would be too large to allocate";
  image.fill(Qt::white);
  QPainter p(&image);
  p.setRenderHint(QPainter::Antialiasing);
  p.setRenderHint(QPainter::TextAntialiasing);
  scene.render(&p, QRectF(QPointF(0, 0), QSizeF(image.size())), source);
  p.end();
  return image.save(path, "PNG") ? QString() : path + ": cannot write";
}

QString writeTextFile(const QString& path, const std::string& text) {
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) return path + ": " + f.errorString();
  if (f.write(text.data(), static_cast<qint64>(text.size())) != static_cast<qint64>(text.size()))
    return path + ": " + f.errorString();
  return {};
}

}  // namespace kiln::views
