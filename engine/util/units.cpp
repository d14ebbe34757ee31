#include "util/units.h"

#include <cmath>
#include <cstdio>

namespace kiln {

std::string withThousands(int64_t v) {
  const bool neg = v < 0;
  uint64_t u = neg ? static_cast<uint64_t>(-(v + 1)) + 1 : static_cast<uint64_t>(v);
  std::string digits = std::to_string(u);
  std::string out;
  const size_t n = digits.size();
  for (size_t i = 0; i < n; ++i) {
    if (i && (n - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return neg ? "-" + out : out;
}

std::string formatBytes(double bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  double v = bytes;
  while (std::fabs(v) >= 1024.0 && u < 5) {
    v /= 1024.0;
    ++u;
  }
  char buf[32];
  if (u == 0) std::snprintf(buf, sizeof buf, "%.0f B", v);
  else std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}

std::string formatDuration(double seconds) {
  char buf[32];
  const double a = std::fabs(seconds);
  if (a >= 1.0) std::snprintf(buf, sizeof buf, "%.2f s", seconds);
  else if (a >= 1e-3) std::snprintf(buf, sizeof buf, "%.1f ms", seconds * 1e3);
  else if (a >= 1e-6) std::snprintf(buf, sizeof buf, "%.1f µs", seconds * 1e6);
  else std::snprintf(buf, sizeof buf, "%.0f ns", seconds * 1e9);
  return buf;
}

size_t displayWidth(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xc0) != 0x80) ++n;  // count lead bytes only
  return n;
}

std::string padRight(const std::string& s, size_t width) {
  const size_t w = displayWidth(s);
  return w >= width ? s : s + std::string(width - w, ' ');
}

std::string padLeft(const std::string& s, size_t width) {
  const size_t w = displayWidth(s);
  return w >= width ? s : std::string(width - w, ' ') + s;
}

}  // namespace kiln
