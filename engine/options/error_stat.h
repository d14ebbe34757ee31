#pragma once
// verify.error_stat: which statistic of the per-element error the precision gate judges, as Polygraphy's
// --check-error-stat does. "max" (the default: no element may be over its bound), "mean", "median", or
// "quantile:Q" with 0 < Q < 1 (e.g. "quantile:0.99": 99% of the elements within their bound). The cosine bound
// applies whatever the statistic.
#include <string>

namespace kiln {

struct ErrorStat {
  enum class Kind { Max, Mean, Median, Quantile };
  Kind kind = Kind::Max;
  double quantile = 1.0;  // Quantile (Median is 0.5)
  std::string text() const;  // "max", "mean", "median", "quantile:0.99"
};

// Throws std::invalid_argument naming what is allowed.
ErrorStat parseErrorStat(const std::string& text);

}  // namespace kiln
