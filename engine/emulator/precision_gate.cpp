#include "emulator/precision_gate.h"

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
  return std::string(computePrecisionName(precision)) + " gate: cosine >= " + num(minCosine, "%.10g") +
         ", error <= " + num(rtol, "%.3g") + " of each value and the output's scale";
}

PrecisionGate precisionGate(const Options& options, ComputePrecision p) {
  PrecisionGate g;
  g.precision = p;
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
  const std::string error = "max error " + num(d.maxAbs) + (scale > 0 ? " = " + percent(d.maxAbs / scale) +
                                                                            " of the output's scale " + num(scale)
                                                                      : std::string());
  if (d.mismatches) {
    v.reason = error + "; " + std::to_string(d.mismatches) + " elements over rtol " + num(gate.rtol) + " (" +
               d.firstMismatch + ")";
    return v;
  }
  v.passed = true;
  v.reason = cosine + " >= " + num(gate.minCosine, "%.10g") + ", " + error + " within rtol " + num(gate.rtol);
  return v;
}

std::vector<OutputVerdict> judgeOutputs(const EmulationReport& report, const PrecisionGate& gate) {
  std::vector<OutputVerdict> out;
  for (size_t i = 0; i < report.compiled.size() && i < report.reference.size(); ++i)
    out.push_back(judgeOutput(i < report.errors.size() ? report.errors[i].name : "#" + std::to_string(i),
                              report.compiled[i], report.reference[i], gate));
  return out;
}

std::string firstFailure(const std::vector<OutputVerdict>& verdicts) {
  for (const OutputVerdict& v : verdicts)
    if (!v.passed) return "output '" + v.name + "': " + v.reason;
  return {};
}

}  // namespace kiln
