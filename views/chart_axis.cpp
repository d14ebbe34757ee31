#include "chart_axis.h"

#include <algorithm>
#include <cmath>

namespace kiln::views {

void ChartAxis::setExtent(double lo, double hi, double minSpan) {
  if (!std::isfinite(lo) || !std::isfinite(hi) || hi <= lo) {
    lo = 0;
    hi = 1;
  }
  extentLo_ = lo;
  extentHi_ = hi;
  minSpan_ = std::isfinite(minSpan) && minSpan > 0 ? std::min(minSpan, hi - lo) : (hi - lo) * 1e-9;
  clamp();
}

void ChartAxis::setPixels(double from, double to, bool flipped) {
  pixelFrom_ = from;
  pixelTo_ = std::max(to, from + 1);
  flipped_ = flipped;
}

void ChartAxis::fit() {
  lo_ = extentLo_;
  hi_ = extentHi_;
}

double ChartAxis::pixelsPerUnit() const { return (pixelTo_ - pixelFrom_) / (hi_ - lo_); }

double ChartAxis::toPixel(double v) const {
  const double p = (v - lo_) * pixelsPerUnit();
  return flipped_ ? pixelTo_ - p : pixelFrom_ + p;
}

double ChartAxis::toData(double pixel) const {
  const double p = flipped_ ? pixelTo_ - pixel : pixel - pixelFrom_;
  return lo_ + p / pixelsPerUnit();
}

void ChartAxis::zoomAt(double pixel, double factor) {
  if (!std::isfinite(factor) || factor <= 0) return;
  const double anchor = toData(std::clamp(pixel, pixelFrom_, pixelTo_));
  const double span = std::clamp((hi_ - lo_) / factor, minSpan_, extentHi_ - extentLo_);
  const double share = (anchor - lo_) / (hi_ - lo_);
  lo_ = anchor - share * span;
  hi_ = lo_ + span;
  clamp();
}

void ChartAxis::panPixels(double delta) {
  const double d = delta / pixelsPerUnit() * (flipped_ ? 1 : -1);
  lo_ += d;
  hi_ += d;
  clamp();
}

void ChartAxis::centreOn(double v) {
  const double span = hi_ - lo_;
  lo_ = v - span / 2;
  hi_ = lo_ + span;
  clamp();
}

void ChartAxis::setWindow(double lo, double hi) {
  if (!std::isfinite(lo) || !std::isfinite(hi) || hi <= lo) return;
  lo_ = lo;
  hi_ = hi;
  clamp();
}

void ChartAxis::clamp() {
  double span = std::clamp(hi_ - lo_, minSpan_, extentHi_ - extentLo_);
  if (!std::isfinite(span) || span <= 0) span = extentHi_ - extentLo_;
  lo_ = std::clamp(std::isfinite(lo_) ? lo_ : extentLo_, extentLo_, extentHi_ - span);
  hi_ = lo_ + span;
}

std::vector<double> ChartAxis::ticks(int count, bool binary) const {
  std::vector<double> out;
  const double raw = (hi_ - lo_) / std::max(count, 1);
  if (!(raw > 0) || !std::isfinite(raw)) return out;
  double step = 0;
  if (binary) {
    step = std::pow(2.0, std::ceil(std::log2(raw)));
  } else {
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    step = magnitude * 10;
    for (double m : {1.0, 2.0, 5.0})
      if (m * magnitude >= raw) {
        step = m * magnitude;
        break;
      }
  }
  for (double v = std::ceil(lo_ / step) * step; v <= hi_ && out.size() < 1000; v += step) out.push_back(v);
  return out;
}

}  // namespace kiln::views
