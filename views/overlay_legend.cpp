#include "overlay_legend.h"

#include <QPainter>

namespace kiln::views {

QColor toQColor(const layout::Rgb& c) { return QColor(c.r, c.g, c.b); }

OverlayLegend::OverlayLegend(QWidget* parent) : QWidget(parent) {
  setAttribute(Qt::WA_TransparentForMouseEvents);
  hide();
}

void OverlayLegend::setOverlay(const std::optional<layout::Overlay>& overlay, int highlightRules) {
  overlay_ = overlay;
  rules_ = highlightRules;
  setVisible(overlay_.has_value() || rules_ > 0);
  resize(sizeHint());
  update();
}

QSize OverlayLegend::sizeHint() const {
  const int line = fontMetrics().height() + 4;
  int lines = rules_ ? 1 : 0;
  if (overlay_) lines += overlay_->categorical ? 1 + int(overlay_->categoryOrder.size()) : 3;
  return {240, lines * line + 10};
}

void OverlayLegend::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing);
  QColor back = palette().color(QPalette::Base);
  back.setAlpha(225);
  p.setPen(palette().color(QPalette::Mid));
  p.setBrush(back);
  p.drawRoundedRect(rect().adjusted(0, 0, -1, -1), 5, 5);
  p.setPen(palette().color(QPalette::Text));
  const int line = fontMetrics().height() + 4;
  int y = 5;
  auto text = [&](int x, const QString& t) {
    p.drawText(QRect(x, y, width() - x - 6, line), Qt::AlignVCenter | Qt::AlignLeft, t);
  };
  if (overlay_) {
    text(8, QString::fromStdString(overlay_->metric) + (overlay_->logScale ? tr(" (log scale)") : QString()));
    y += line;
    if (overlay_->categorical) {
      for (size_t i = 0; i < overlay_->categoryOrder.size(); ++i) {
        p.setBrush(toQColor(layout::Overlay::categoryColour(i)));
        p.drawRect(10, y + 3, 14, line - 6);
        text(30, QString::fromStdString(overlay_->categoryOrder[i]));
        y += line;
      }
    } else {
      QLinearGradient g(10, 0, width() - 10, 0);
      for (int k = 0; k <= 8; ++k) g.setColorAt(k / 8.0, toQColor(layout::Overlay::ramp(k / 8.0)));
      p.setPen(Qt::NoPen);
      p.setBrush(g);
      p.drawRect(10, y + 3, width() - 20, line - 6);
      p.setPen(palette().color(QPalette::Text));
      y += line;
      text(10, QString::fromStdString(overlay_->valueAt(0)));
      p.drawText(QRect(10, y, width() - 20, line), Qt::AlignVCenter | Qt::AlignRight,
                 QString::fromStdString(overlay_->valueAt(1)));
      y += line;
    }
  }
  if (rules_) text(8, tr("%n highlight rule(s): coloured rings", "", rules_));
}

}  // namespace kiln::views
