#include "view_colors.h"

#include <cstdint>

namespace kiln::views {

QColor unitColor(const QString& unit) {
  if (unit == "cube") return QColor(0x3b, 0x82, 0xf6);    // blue
  if (unit == "vector") return QColor(0x14, 0xb8, 0xa6);  // teal
  if (unit == "aicpu") return QColor(0xa8, 0x55, 0xf7);   // violet
  if (unit == "host") return QColor(0x78, 0x71, 0x6c);    // stone
  if (unit == "dma") return QColor(0xdb, 0x27, 0x77);     // pink: copies
  if (unit == "stream") return QColor(0x64, 0x74, 0x8b);  // slate: events, END_GRAPH
  // A measured task's unit is the profiler's task type: the same colour as the unit the simulation names.
  if (unit.startsWith("ai_core") || unit == "mix_aic") return unitColor("cube");
  if (unit.startsWith("ai_vector") || unit == "mix_aiv") return unitColor("vector");
  if (unit == "ai_cpu") return unitColor("aicpu");
  return QColor(0x9c, 0xa3, 0xaf);                        // grey: not placed yet
}

QColor measuredColor() { return QColor(0xd9, 0x77, 0x06); }  // amber: what a profiler measured

QColor nodeFill(const QString& unit, const QPalette& palette) {
  // 30% hue over the base keeps labels in the palette's text colour readable on light and dark themes.
  return towardsBase(unitColor(unit), palette, 0.70);
}

QColor towardsBase(const QColor& c, const QPalette& palette, double amount) {
  const QColor base = palette.color(QPalette::Base);
  const double a = 1 - amount;
  return QColor::fromRgbF(base.redF() * (1 - a) + c.redF() * a, base.greenF() * (1 - a) + c.greenF() * a,
                          base.blueF() * (1 - a) + c.blueF() * a);
}

QColor categoryColor(int index) {
  // Twelve hues far apart from each other (and from the selection highlight when drawn with an outline).
  static const QRgb hues[] = {0x4e79a7, 0xf28e2b, 0x59a14f, 0xe15759, 0x76b7b2, 0xedc948,
                              0xb07aa1, 0xff9da7, 0x9c755f, 0x8cd17d, 0x499894, 0xd37295};
  constexpr int n = int(sizeof(hues) / sizeof(hues[0]));
  const int i = index < 0 ? 0 : index;
  const QColor c = QColor::fromRgb(hues[i % n]);
  switch ((i / n) % 3) {
    case 1: return c.darker(135);
    case 2: return c.lighter(125);
    default: return c;
  }
}

QColor categoryColor(const QString& key) {
  // FNV-1a, not qHash: qHash is seeded per process, and a colour should mean the same thing from run to run.
  uint32_t h = 2166136261u;
  for (QChar ch : key) h = (h ^ ch.unicode()) * 16777619u;
  return categoryColor(int(h % 36));
}

QColor criticalColor() { return QColor(0xdc, 0x26, 0x26); }

QColor diffColor(DiffState s) {
  switch (s) {
    case DiffState::Added: return QColor(0x16, 0xa3, 0x4a);
    case DiffState::Changed: return QColor(0xf5, 0x9e, 0x0b);
    case DiffState::Removed: return QColor(0x9c, 0xa3, 0xaf);
    case DiffState::Unchanged: break;
  }
  return {};
}

QColor betterColor() { return diffColor(DiffState::Added); }
QColor worseColor() { return QColor(0xdc, 0x26, 0x26); }

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
