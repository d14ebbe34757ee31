#pragma once
// The colour language shared by every view: each colour carries one meaning. Compute unit for nodes and tasks (cube,
// vector, AI CPU, host, DMA), diff state (added green, changed amber, removed grey ghost), problems
// (red text). Fills are blended with the window
// colour of the current palette, so light and dark themes both work and text keeps the palette's text colour.
#include <QColor>
#include <QPalette>
#include <QString>

namespace kiln::views {

enum class DiffState { Unchanged, Added, Changed, Removed };

// `unit` as the validity check records it ("cube", "vector", "aicpu", "host", "" = not yet known), or as the timing
// simulator names it (also "dma" for copies, "stream" for events).
QColor unitColor(const QString& unit);
// Measured (profiled) time and memory drawn beside the simulation and the plan.
QColor measuredColor();
// A node's fill: its unit's hue softened towards the palette's base colour.
QColor nodeFill(const QString& unit, const QPalette& palette);
QColor diffColor(DiffState s);
QString unitLabel(const QString& unit);  // "Cube (AI Core)", "Vector (AI Core)", "AI CPU", "Host", "unknown"
// Text colour for problems (rejected values, failed loads): red pulled towards the palette's text colour.
QColor errorText(const QPalette& palette);
// Categories without a meaning of their own (reuse blocks, op types, streams in the memory view): a fixed set of
// well-separated hues, then the same hues darker and lighter; the same key always gets the same colour.
QColor categoryColor(int index);
QColor categoryColor(const QString& key);
// A comparison's verdict on a difference: B better than A (green, the diff's "added" hue) or worse (red).
QColor betterColor();
QColor worseColor();
// Emphasis that is not a problem: the critical path of a simulated run, the memory peak.
QColor criticalColor();
// `c` pulled towards the palette's base colour by `amount` (0..1): a lighter tint on light themes.
QColor towardsBase(const QColor& c, const QPalette& palette, double amount);

}  // namespace kiln::views
