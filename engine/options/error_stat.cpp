#include "options/error_stat.h"

#include <cstdlib>
#include <stdexcept>

namespace kiln {

std::string ErrorStat::text() const {
  switch (kind) {
    case Kind::Max: return "max";
    case Kind::Mean: return "mean";
    case Kind::Median: return "median";
    case Kind::Quantile: break;
  }
  std::string q = std::to_string(quantile);
  while (q.size() > 3 && q.back() == '0') q.pop_back();
  return "quantile:" + q;
}

ErrorStat parseErrorStat(const std::string& text) {
  ErrorStat s;
  if (text == "max") return s;
  if (text == "mean") {
    s.kind = ErrorStat::Kind::Mean;
    return s;
  }
  if (text == "median") {
    s.kind = ErrorStat::Kind::Median;
    s.quantile = 0.5;
    return s;
  }
  if (text.rfind("quantile:", 0) == 0) {
    const std::string q = text.substr(9);
    char* end = nullptr;
    const double v = std::strtod(q.c_str(), &end);
    if (!q.empty() && end && *end == '\0' && v > 0 && v < 1) {
      s.kind = ErrorStat::Kind::Quantile;
      s.quantile = v;
      return s;
    }
  }
  throw std::invalid_argument("verify.error_stat '" + text +
                              "' is not max, mean, median or quantile:Q with 0 < Q < 1 (e.g. quantile:0.99)");
}

}  // namespace kiln
