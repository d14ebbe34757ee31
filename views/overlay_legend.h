#pragma once
// The legend of the canvas' overlay: the metric's name, the colour ramp with its low and high values (log scale
// said when used), or one swatch per category; and a line for the highlight rules. Sits in the canvas' top-left
// corner; hidden when the canvas shows its plain colours.
#include <QWidget>
#include <optional>

#include "layout/node_overlay.h"

namespace kiln::views {

class OverlayLegend : public QWidget {
 public:
  explicit OverlayLegend(QWidget* parent);
  void setOverlay(const std::optional<layout::Overlay>& overlay, int highlightRules);
  QSize sizeHint() const override;

 protected:
  void paintEvent(QPaintEvent*) override;

 private:
  std::optional<layout::Overlay> overlay_;
  int rules_ = 0;
};

QColor toQColor(const layout::Rgb& c);

}  // namespace kiln::views
