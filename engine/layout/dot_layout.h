#pragma once
// Places a ViewGraph with Graphviz dot (libgvc): ranks top to bottom, open groups as clusters. Graphviz keeps
// global state and is not thread-safe, so calls are serialised by one process-wide lock; run this on a worker
// thread (a 1.6k-item layout takes over a second, 5k items ~18 s — the scope tree keeps layouts far smaller).
#include <string>
#include <vector>

#include "layout/view_graph.h"

namespace kiln::layout {

struct ItemSize {
  double width = 120, height = 36;  // points
};

struct Point {
  double x = 0, y = 0;
};

struct Rect {
  double x = 0, y = 0, width = 0, height = 0;  // top-left, y down
};

struct Layout {
  std::vector<Rect> items;                  // per ViewGraph item
  std::vector<std::vector<Point>> edges;    // per ViewGraph edge: cubic Bézier control points (1 + 3k)
  std::vector<Rect> clusters;               // per ViewGraph cluster
  double width = 0, height = 0;             // bounding box, origin top-left
  double ms = 0;                            // time spent in Graphviz
};

// `sizes` per item (same order as vg.items). Throws std::runtime_error when Graphviz fails (e.g. its plugin
// configuration is missing: run `libgvc6-config-update -c`).
Layout layoutWithDot(const ViewGraph& vg, const std::vector<ItemSize>& sizes);

}  // namespace kiln::layout
