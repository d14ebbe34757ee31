#pragma once
// A tiny SVG writer for the report's charts: shapes with an optional tooltip (<title>), text escaped. Coordinates are
// in user units with y down, as SVG has them.
#include <string>

namespace kiln {

class SvgCanvas {
 public:
  SvgCanvas(double width, double height);
  void rect(double x, double y, double w, double h, const std::string& fill, const std::string& tooltip = {},
            const std::string& extra = {});
  void line(double x1, double y1, double x2, double y2, const std::string& stroke, const std::string& extra = {});
  // anchor: start, middle, end
  void text(double x, double y, const std::string& s, const std::string& anchor = "start", double size = 11,
            const std::string& extra = {});
  void path(const std::string& d, const std::string& stroke, const std::string& fill = "none",
            const std::string& extra = {});
  void raw(const std::string& svg) { body_ += svg; }
  std::string str() const;

 private:
  double width_, height_;
  std::string body_;
};

// "%.1f": SVG numbers without exponent noise.
std::string svgNum(double v);

}  // namespace kiln
