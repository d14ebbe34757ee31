#pragma once
// One zoomable, pannable axis of a chart: the data's extent, the window of it on screen and the pixels it maps to.
// The memory view uses two (steps across, bytes up), the Gantt chart one (time). Zooming keeps the data point under
// the cursor in place; the window never leaves the data's extent and never gets narrower than `minSpan`, so no
// wheel or drag can produce a degenerate (zero or non-finite) scale, whatever the data.
#include <vector>

namespace kiln::views {

class ChartAxis {
 public:
  // [lo, hi): the data's extent; an empty or non-finite one becomes [0, 1).
  void setExtent(double lo, double hi, double minSpan);
  // Pixels the window maps to; `flipped`: data grows towards lower pixels (a y axis pointing up).
  void setPixels(double from, double to, bool flipped = false);
  void fit();  // the window = the whole extent

  double lo() const { return lo_; }
  double hi() const { return hi_; }
  double extentLo() const { return extentLo_; }
  double extentHi() const { return extentHi_; }
  double pixelFrom() const { return pixelFrom_; }
  double pixelTo() const { return pixelTo_; }
  double toPixel(double v) const;
  double toData(double pixel) const;
  double pixelsPerUnit() const;

  void zoomAt(double pixel, double factor);  // factor > 1 zooms in
  void panPixels(double delta);              // positive moves the content towards higher pixels
  void centreOn(double v);
  void setWindow(double lo, double hi);  // clamped to the extent like every other move

  // Round values between lo and hi for grid lines and labels, about `count` of them: 1, 2, 5 × 10^k steps, or
  // power-of-two steps with `binary` (bytes: 1 MiB, not 976.6 KiB).
  std::vector<double> ticks(int count, bool binary = false) const;

 private:
  void clamp();
  double extentLo_ = 0, extentHi_ = 1, minSpan_ = 1e-9;
  double lo_ = 0, hi_ = 1;
  double pixelFrom_ = 0, pixelTo_ = 1;
  bool flipped_ = false;
};

}  // namespace kiln::views
