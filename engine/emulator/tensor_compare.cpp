#include "emulator/tensor_compare.h"

#include <cmath>
#include <algorithm>
#include <cstdio>

#include "ir/shape.h"

namespace kiln {

namespace {

std::string describe(const Tensor& t) {
  return std::string(dtypeName(t.dtype())) + "[" + Shape::ofStatic(t.dims()).toString() + "]";
}

std::string number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

}  // namespace

Tolerance toleranceFor(DType t) {
  if (t == DType::Float16) return {2e-3, 1e-4};
  if (t == DType::BFloat16) return {1e-2, 1e-3};
  return {};
}

TensorDifference compareTensors(const Tensor& got, const Tensor& want, const Tolerance& tol) {
  TensorDifference d;
  if (got.dtype() != want.dtype() || got.dims() != want.dims()) {
    d.comparable = false;
    d.cosine = 0;
    d.firstMismatch = "got " + describe(got) + ", expected " + describe(want);
    return d;
  }
  if (want.dtype() == DType::String) {
    for (size_t i = 0; i < want.strings().size(); ++i)
      if (got.strings()[i] != want.strings()[i] && d.mismatches++ == 0)
        d.firstMismatch = "element " + std::to_string(i) + ": got \"" + got.strings()[i] + "\", expected \"" +
                          want.strings()[i] + "\"";
    return d;
  }
  const std::vector<double> g = got.toDouble(), w = want.toDouble();
  const bool exact = !isFloating(want.dtype());
  // Integers compare exactly as integers (int64 values above 2^53 are not exact as doubles).
  const std::vector<int64_t> gi = exact ? got.toInt64() : std::vector<int64_t>{};
  const std::vector<int64_t> wi = exact ? want.toInt64() : std::vector<int64_t>{};
  double dot = 0, gg = 0, ww = 0;
  for (size_t i = 0; i < w.size() && i < g.size(); ++i) {
    const double a = g[i], b = w[i];
    if (std::isfinite(a) != std::isfinite(b) && !d.oneSidedNonFinite) {
      d.oneSidedNonFinite = true;
      d.firstNonFinite = "element " + std::to_string(i) + ": got " + number(a) + ", expected " + number(b);
    }
    if (std::isnan(a) || std::isnan(b)) {
      if (std::isnan(a) != std::isnan(b) && d.mismatches++ == 0)
        d.firstMismatch = "element " + std::to_string(i) + ": got " + number(a) + ", expected " + number(b);
      if (std::isnan(a) != std::isnan(b)) d.maxAbs = d.maxRel = HUGE_VAL;
      continue;
    }
    const double diff = a == b ? 0.0 : std::fabs(a - b);  // equal infinities differ by 0, not NaN
    if (std::isfinite(a) && std::isfinite(b)) {
      dot += a * b;
      gg += a * a;
      ww += b * b;
    }
    d.maxAbs = std::max(d.maxAbs, diff);
    if (b != 0) d.maxRel = std::max(d.maxRel, diff / std::fabs(b));
    const bool ok = exact ? (i < gi.size() && i < wi.size() ? gi[i] == wi[i] : diff == 0)
                          : diff <= tol.atol + tol.rtol * std::fabs(b);
    if (!ok && d.mismatches++ == 0)
      d.firstMismatch = "element " + std::to_string(i) + ": got " + number(a) + ", expected " + number(b);
  }
  if (d.oneSidedNonFinite)
    d.cosine = 0;  // no direction to compare: over the finite pairs alone, an output gone all NaN would score 1
  else if (gg > 0 && ww > 0)
    d.cosine = dot / (std::sqrt(gg) * std::sqrt(ww));
  else
    d.cosine = gg == ww ? 1.0 : 0.0;
  return d;
}

Tolerance scaledTolerance(const Tensor& want, double rtol) {
  double scale = 0;
  if (want.dtype() != DType::String)
    for (double v : want.toDouble())
      if (std::isfinite(v)) scale = std::max(scale, std::abs(v));
  return Tolerance{rtol, std::max(rtol * scale, Tolerance{}.atol)};
}

}  // namespace kiln
