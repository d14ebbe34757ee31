#include "view_colors.h"

namespace kiln::views {

QColor unitColor(const QString& unit) {
  if (unit == "cube") return QColor(0x3b, 0x82, 0xf6);    // blue
  if (unit == "vector") return QColor(0x14, 0xb8, 0xa6);  // teal
  if (unit == "aicpu") return QColor(0xa8, 0x55, 0xf7);   // violet
  if (unit == "host") return QColor(0x78, 0x71, 0x6c);    // stone
  return QColor(0x9c, 0xa3, 0xaf);                        // grey: not placed yet
}

QColor nodeFill(const QString& unit, const QPalette& palette) {
  const QColor base = palette.color(QPalette::Base);
  const QColor hue = unitColor(unit);
  // 30% hue over the base keeps labels in the palette's text colour readable on light and dark themes.
  const double a = 0.30;
  return QColor::fromRgbF(base.redF() * (1 - a) + hue.redF() * a, base.greenF() * (1 - a) + hue.greenF() * a,
                          base.blueF() * (1 - a) + hue.blueF() * a);
}

QColor diffColor(DiffState s) {
  switch (s) {
    case DiffState::Added: return QColor(0x16, 0xa3, 0x4a);
    case DiffState::Changed: return QColor(0xf5, 0x9e, 0x0b);
    case DiffState::Removed: return QColor(0x9c, 0xa3, 0xaf);
    case DiffState::Unchanged: break;
  }
  return {};
}

QString unitLabel(const QString& unit) {
  if (unit == "cube") return "Cube (AI Core)";
  if (unit == "vector") return "Vector (AI Core)";
  if (unit == "aicpu") return "AI CPU";
  if (unit == "host") return "Host";
  return "unknown";
}

QColor errorText(const QPalette& palette) {
  const QColor text = palette.color(QPalette::WindowText);
  const QColor red(0xdc, 0x26, 0x26);
  // A quarter of the text colour: darker red on light themes, lighter on dark ones, readable on both.
  const double a = 0.25;
  return QColor::fromRgbF(red.redF() * (1 - a) + text.redF() * a, red.greenF() * (1 - a) + text.greenF() * a,
                          red.blueF() * (1 - a) + text.blueF() * a);
}

}  // namespace kiln::views
