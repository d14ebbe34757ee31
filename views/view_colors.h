#pragma once
// The colour language shared by every view: each colour carries one meaning. Compute unit for nodes (cube, vector,
// AI CPU, host), diff state (added green, changed amber, removed grey ghost), problems
// (red text). Fills are blended with the window
// colour of the current palette, so light and dark themes both work and text keeps the palette's text colour.
#include <QColor>
#include <QPalette>
#include <QString>

namespace kiln::views {

enum class DiffState { Unchanged, Added, Changed, Removed };

// `unit` as the validity check records it ("cube", "vector", "aicpu", "host", "" = not yet known).
QColor unitColor(const QString& unit);
// A node's fill: its unit's hue softened towards the palette's base colour.
QColor nodeFill(const QString& unit, const QPalette& palette);
QColor diffColor(DiffState s);
QString unitLabel(const QString& unit);  // "Cube (AI Core)", "Vector (AI Core)", "AI CPU", "Host", "unknown"
// Text colour for problems (rejected values, failed loads): red pulled towards the palette's text colour.
QColor errorText(const QPalette& palette);

}  // namespace kiln::views
