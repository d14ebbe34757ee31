#pragma once
// Honest precision verdicts: every compile is gated, whatever it computes in. An emulated output passes when its
// cosine similarity to the reference reaches verify.min_cosine (0.99, as Ascend's accuracy comparison uses) AND every
// element is within rtol of its own magnitude plus the output's scale (scaledTolerance) — or, with verify.error_stat,
// the mean, median or a quantile of the elements' errors is — rtol chosen by the lowest
// float precision the compiled graph computes in: verify.rtol_fp32 (1e-4: evaluation order only), verify.rtol_fp16
// (2e-2: every op rounds to 11 bits) or verify.rtol_bf16 (5e-2: 8 bits). Integer and bool outputs must agree
// exactly in fp32 compiles; in reduced precision they are gated by cosine (an argmax may flip on a near tie).
// An output that was not computed has no verdict: it is reported missing, never passed.
#include <string>
#include <vector>

#include "emulator/emulation.h"
#include "options/error_stat.h"
#include "options/options.h"

namespace kiln {

enum class ComputePrecision { Fp32, Fp16, Bf16 };
const char* computePrecisionName(ComputePrecision p);  // "fp32", "fp16", "bf16"

// The lowest float precision any node of `g` (subgraphs included) produces: what the compiled numbers went through.
ComputePrecision computePrecision(const Graph& g);

struct PrecisionGate {
  ComputePrecision precision = ComputePrecision::Fp32;
  double minCosine = 0.99;
  double rtol = 1e-4;
  // verify.error_stat: the statistic of the elements' errors (each relative to its own bound) that must be within
  // rtol. Max, the default, is "every element within its bound".
  ErrorStat stat;
  // "fp16 gate: cosine >= 0.99, error <= 2% of the output's scale"
  std::string describe() const;
};

// The gate for a compile computing in `p` under the options' thresholds.
PrecisionGate precisionGate(const Options& options, ComputePrecision p);
// The gate for the compiled graph `g` (its computePrecision).
PrecisionGate precisionGate(const Options& options, const Graph& g);

struct OutputVerdict {
  std::string name;
  bool passed = false;
  // Floating outputs: the share of elements over their bound (reported beside the maximum whatever the statistic),
  // and the judged statistic of the elements' errors in units of rtol's bound (1 = at the bound).
  double overShare = 0;
  double statValue = 0;
  std::string reason;  // why it failed, or what it passed: "cosine 0.9999 >= 0.99, max error 0.31% of scale <= 2%"
  TensorDifference diff;
};

OutputVerdict judgeOutput(const std::string& name, const Tensor& got, const Tensor& want, const PrecisionGate& gate);
// One verdict per output the compiled run produced; empty when it produced none (compiledError set). A failed fp16
// verdict names the first node whose fp32 reference value is beyond fp16's range, when one is.
std::vector<OutputVerdict> judgeOutputs(const EmulationReport& report, const PrecisionGate& gate);
// "output 'y': cosine 0.40 < 0.99" for the first failed verdict; "" when all passed.
std::string firstFailure(const std::vector<OutputVerdict>& verdicts);

}  // namespace kiln
