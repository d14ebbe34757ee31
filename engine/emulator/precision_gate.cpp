#include "emulator/precision_gate.h"

#include "emulator/tensor_compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace kiln {
namespace {

std::string num(double v, const char* fmt = "%.3g") {
  char buf[40];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

std::string percent(double fraction) { return num(100 * fraction, "%.3g") + "%"; }

double scaleOf(const Tensor& t) {
  double s = 0;
  if (t.dtype() == DType::String) return s;
  for (double v : t.toDouble())
    if (std::isfinite(v)) s = std::max(s, std::abs(v));
  return s;
}

// Each element's error in units of its own bound (atol + rtol·|want|, as scaledTolerance sets it: 1 = at the bound),
// and the gate's statistic of them. A non-finite result where the reference is finite counts as infinitely wrong.
double errorStatistic(const Tensor& got, const Tensor& want, const PrecisionGate& gate) {
  const std::vector<double> g = got.toDouble(), w = want.toDouble();
  if (g.size() != w.size() || g.empty()) return 0;
  const Tolerance tol = scaledTolerance(want, gate.rtol);
  std::vector<double> e(g.size());
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(g[i]) && std::isnan(w[i])) continue;
    const double diff = std::fabs(g[i] - w[i]);
    const double bound = tol.atol + tol.rtol * std::fabs(w[i]);
    e[i] = !std::isfinite(diff) ? INFINITY : bound > 0 ? diff / bound : (diff > 0 ? INFINITY : 0);
  }
  if (gate.stat.kind == ErrorStat::Kind::Mean) {
    double sum = 0;
    for (double x : e) sum += x;
    return sum / static_cast<double>(e.size());
  }
  // Median or a quantile: the smallest error that at least that share of the elements do not exceed.
  const auto rank = static_cast<size_t>(std::ceil(gate.stat.quantile * static_cast<double>(e.size())));
  const size_t k = std::min(e.size() - 1, rank > 0 ? rank - 1 : 0);
  std::nth_element(e.begin(), e.begin() + static_cast<ptrdiff_t>(k), e.end());
  return e[k];
}

}  // namespace

const char* computePrecisionName(ComputePrecision p) {
  switch (p) {
    case ComputePrecision::Fp32: return "fp32";
    case ComputePrecision::Fp16: return "fp16";
    case ComputePrecision::Bf16: return "bf16";
  }
  return "fp32";
}

ComputePrecision computePrecision(const Graph& g) {
  ComputePrecision p = ComputePrecision::Fp32;
  g.forEachGraph([&](const Graph& sg) {
    for (const Node* n : sg.nodes())
      for (const Value* o : n->outputs()) {
        if (!o || !o->type().isTensor()) continue;
        if (o->type().dtype == DType::BFloat16) p = ComputePrecision::Bf16;
        else if (o->type().dtype == DType::Float16 && p == ComputePrecision::Fp32) p = ComputePrecision::Fp16;
      }
  });
  return p;
}

std::string PrecisionGate::describe() const {
  return std::string(computePrecisionName(precision)) + " gate: cosine >= " + num(minCosine, "%.10g") + ", " +
         (stat.kind == ErrorStat::Kind::Max ? std::string("error") : stat.text() + " of the errors") + " <= " +
         num(rtol, "%.3g") + " of each value and the output's scale";
}

PrecisionGate precisionGate(const Options& options, ComputePrecision p) {
  PrecisionGate g;
  g.precision = p;
  g.stat = parseErrorStat(options.getString("verify.error_stat"));
  g.minCosine = options.getNumber("verify.min_cosine");
  g.rtol = options.getNumber(p == ComputePrecision::Fp32   ? "verify.rtol_fp32"
                             : p == ComputePrecision::Fp16 ? "verify.rtol_fp16"
                                                           : "verify.rtol_bf16");
  return g;
}

PrecisionGate precisionGate(const Options& options, const Graph& g) { return precisionGate(options, computePrecision(g)); }

OutputVerdict judgeOutput(const std::string& name, const Tensor& got, const Tensor& want, const PrecisionGate& gate) {
  OutputVerdict v;
  v.name = name;
  v.diff = compareTensors(got, want, scaledTolerance(want, gate.rtol));
  const TensorDifference& d = v.diff;
  if (!d.comparable) {
    v.reason = d.firstMismatch;
    return v;
  }
  const bool exactType = !isFloating(want.dtype());
  const std::string cosine = "cosine " + num(d.cosine, "%.8g");
  if (d.cosine < gate.minCosine) {
    v.reason = cosine + " < " + num(gate.minCosine, "%.10g");
    // NaN or infinity where the reference is finite, at reduced precision: values outgrew the format on the way.
    if (d.oneSidedNonFinite && gate.precision != ComputePrecision::Fp32)
      v.reason += std::string(" (") + d.firstNonFinite + ": where the reference is finite; values most likely outgrew " +
                  (gate.precision == ComputePrecision::Fp16 ? "fp16 (largest finite value 65504)" : "its format") +
                  " on the way here; kiln verify names the pass)";
    return v;
  }
  if (exactType) {
    if (d.mismatches && gate.precision == ComputePrecision::Fp32) {
      v.reason = std::to_string(d.mismatches) + " elements differ (fp32: integers must agree; " + d.firstMismatch + ")";
      return v;
    }
    v.passed = true;
    v.reason = cosine + " >= " + num(gate.minCosine, "%.10g") +
               (d.mismatches ? ", " + std::to_string(d.mismatches) + " elements differ" : std::string(", exact"));
    return v;
  }
  const double scale = scaleOf(want);
  const int64_t count = std::max<int64_t>(want.numel(), 1);
  v.overShare = static_cast<double>(d.mismatches) / static_cast<double>(count);
  const std::string error = "max error " + num(d.maxAbs) + (scale > 0 ? " = " + percent(d.maxAbs / scale) +
                                                                            " of the output's scale " + num(scale)
                                                                      : std::string());
  const std::string over = std::to_string(d.mismatches) + " of " + std::to_string(want.numel()) + " elements (" +
                           percent(v.overShare) + ") over rtol " + num(gate.rtol);
  if (gate.stat.kind != ErrorStat::Kind::Max) {
    v.statValue = errorStatistic(got, want, gate);
    const std::string stat = gate.stat.text() + " error " + num(v.statValue, "%.3g") + " of the bound";
    v.passed = v.statValue <= 1.0;
    v.reason = (v.passed ? cosine + " >= " + num(gate.minCosine, "%.10g") + ", " : std::string()) + stat +
               (v.passed ? " <= 1" : " > 1") + "; " + error + "; " + over +
               (d.mismatches && !v.passed ? " (" + d.firstMismatch + ")" : std::string());
    return v;
  }
  if (d.mismatches) {
    v.reason = error + "; " + over + " (" + d.firstMismatch + ")";
    return v;
  }
  v.passed = true;
  v.reason = cosine + " >= " + num(gate.minCosine, "%.10g") + ", " + error + " within rtol " + num(gate.rtol);
  return v;
}

std::vector<OutputVerdict> judgeOutputs(const EmulationReport& report, const PrecisionGate& gate) {
  std::vector<OutputVerdict> out;
  for (size_t i = 0; i < report.compiled.size() && i < report.reference.size(); ++i) {
    out.push_back(judgeOutput(i < report.errors.size() ? report.errors[i].name : "#" + std::to_string(i),
                              report.compiled[i], report.reference[i], gate));
    // In fp16, say where the fp32 reference itself first left fp16's range: the overflow is the model's values,
    // not an emulator or compiler fault, and that node is where to keep fp32 (or scale the model).
    if (!out.back().passed && gate.precision == ComputePrecision::Fp16 && !report.beyondFp16.empty())
      out.back().reason += "; the fp32 reference first leaves fp16's range at " + report.beyondFp16;
  }
  return out;
}

std::string firstFailure(const std::vector<OutputVerdict>& verdicts) {
  for (const OutputVerdict& v : verdicts)
    if (!v.passed) return "output '" + v.name + "': " + v.reason;
  return {};
}

}  // namespace kiln
