#include "accuracy_chart.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>
#include <cmath>

#include "view_colors.h"

namespace kiln::views {

namespace {

constexpr double kFloor = -9;  // log10 of the smallest error drawn (anything below is a stub)

// The bar's height as a fraction of the chart: log10(max abs) from 1e-9 (0) to 1 (1).
double heightOf(const PassAccuracyRow& r) {
  if (r.status == "not_emulatable" || r.status == "error") return 1;
  const double e = r.maxAbs.value_or(0);
  if (!(e > 0)) return 0.02;
  return std::clamp((std::log10(e) - kFloor) / -kFloor, 0.02, 1.0);
}

QString describe(const PassAccuracyRow& r) {
  QString s = QString("pass %1: %2").arg(r.seq).arg(QString::fromStdString(r.status));
  if (r.maxAbs) s += QString("\nmax abs %1").arg(*r.maxAbs, 0, 'g', 3);
  if (r.maxRel) s += QString("\nmax rel %1").arg(*r.maxRel, 0, 'g', 3);
  if (r.cosine) s += QString("\ncosine %1").arg(*r.cosine, 0, 'f', 6);
  if (!r.detail.empty()) s += "\n" + QString::fromStdString(r.detail);
  return s;
}

}  // namespace

AccuracyChart::AccuracyChart(QWidget* parent) : QWidget(parent) {
  setMinimumHeight(48);
  setToolTip("Error after each pass against the original (run Verify Numerics to record it)");
}

void AccuracyChart::setRows(std::vector<PassAccuracyRow> rows) {
  rows_ = std::move(rows);
  update();
}

void AccuracyChart::setCurrentPass(int seq) {
  current_ = seq;
  update();
}

int AccuracyChart::barAt(double x) const {
  if (rows_.empty() || width() <= 0) return -1;
  const int i = static_cast<int>(x / width() * static_cast<double>(rows_.size()));
  return i >= 0 && i < static_cast<int>(rows_.size()) ? i : -1;
}

void AccuracyChart::paintEvent(QPaintEvent*) {
  QPainter p(this);
  const QPalette pal = palette();
  p.fillRect(rect(), pal.base());
  if (rows_.empty()) {
    p.setPen(pal.color(QPalette::PlaceholderText));
    p.drawText(rect(), Qt::AlignCenter | Qt::TextWordWrap, "numerics not verified (Run ▸ Verify Numerics)");
    return;
  }
  const double w = double(width()) / double(rows_.size());
  const int h = height() - 2;
  bool firstMarked = false;
  for (size_t i = 0; i < rows_.size(); ++i) {
    const PassAccuracyRow& r = rows_[i];
    const bool bad = r.status != "ok";
    const double bh = heightOf(r) * h;
    const QRectF bar(double(i) * w + 0.5, height() - 1 - bh, std::max(1.0, w - 1), bh);
    QColor c = bad ? errorText(pal) : unitColor("vector");
    if (r.status == "not_emulatable") c = pal.color(QPalette::PlaceholderText);
    p.fillRect(bar, c);
    if (r.status == "exceeds" && !firstMarked) {  // the pass that changed the numbers
      firstMarked = true;
      p.setPen(QPen(errorText(pal), 2));
      p.drawLine(QPointF(bar.center().x(), 0), QPointF(bar.center().x(), height()));
    }
    if (r.seq == current_) {
      p.setPen(QPen(pal.color(QPalette::Highlight), 2));
      p.drawRect(bar.adjusted(-1, -1, 1, 1));
    }
  }
  p.setPen(pal.color(QPalette::PlaceholderText));
  p.drawText(rect().adjusted(3, 1, -3, -1), Qt::AlignTop | Qt::AlignLeft, "max abs error per pass (log, 1e-9 … 1)");
}

void AccuracyChart::mousePressEvent(QMouseEvent* e) {
  if (const int i = barAt(e->position().x()); i >= 0) emit passClicked(rows_[size_t(i)].seq);
}

bool AccuracyChart::event(QEvent* e) {
  if (e->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(e);
    if (const int i = barAt(help->pos().x()); i >= 0) {
      QToolTip::showText(help->globalPos(), describe(rows_[size_t(i)]), this);
      return true;
    }
  }
  return QWidget::event(e);
}

}  // namespace kiln::views
