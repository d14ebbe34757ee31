#include "report/svg_canvas.h"

#include <cmath>
#include <cstdio>

#include "util/xml_escape.h"

namespace kiln {

std::string svgNum(double v) {
  if (!std::isfinite(v)) v = 0;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

SvgCanvas::SvgCanvas(double width, double height) : width_(width), height_(height) {}

void SvgCanvas::rect(double x, double y, double w, double h, const std::string& fill, const std::string& tooltip,
                     const std::string& extra) {
  body_ += "<rect x=\"" + svgNum(x) + "\" y=\"" + svgNum(y) + "\" width=\"" + svgNum(std::max(w, 0.5)) +
           "\" height=\"" + svgNum(std::max(h, 0.5)) + "\" fill=\"" + xmlEscape(fill) + "\"" + extra;
  body_ += tooltip.empty() ? "/>" : "><title>" + xmlEscape(tooltip) + "</title></rect>";
}

void SvgCanvas::line(double x1, double y1, double x2, double y2, const std::string& stroke, const std::string& extra) {
  body_ += "<line x1=\"" + svgNum(x1) + "\" y1=\"" + svgNum(y1) + "\" x2=\"" + svgNum(x2) + "\" y2=\"" + svgNum(y2) +
           "\" stroke=\"" + xmlEscape(stroke) + "\"" + extra + "/>";
}

void SvgCanvas::text(double x, double y, const std::string& s, const std::string& anchor, double size,
                     const std::string& extra) {
  body_ += "<text x=\"" + svgNum(x) + "\" y=\"" + svgNum(y) + "\" font-size=\"" + svgNum(size) +
           "\" text-anchor=\"" + anchor + "\"" + extra + ">" + xmlEscape(s) + "</text>";
}

void SvgCanvas::path(const std::string& d, const std::string& stroke, const std::string& fill, const std::string& extra) {
  body_ += "<path d=\"" + d + "\" stroke=\"" + xmlEscape(stroke) + "\" fill=\"" + xmlEscape(fill) + "\"" + extra + "/>";
}

std::string SvgCanvas::str() const {
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + svgNum(width_) + "\" height=\"" + svgNum(height_) +
         "\" viewBox=\"0 0 " + svgNum(width_) + " " + svgNum(height_) +
         "\" font-family=\"sans-serif\">" + body_ + "</svg>";
}

}  // namespace kiln
