#pragma once
// When an emulated compile counts as wrong (`kiln run`'s exit code, `kiln batch`'s case status): an fp32 compile
// (precision_mode force_fp32 or must_keep_origin_dtype) must match the reference within rtol 1e-4 of each output's
// scale (scaledTolerance: evaluation orders differ by a few ulps of the largest values). fp16 modes round by design:
// their error is reported, not gated.
#include <string>

#include "emulator/emulation.h"
#include "passes/options.h"

namespace kiln {

constexpr double kFp32RelTolerance = 1e-4;

// True for the precision modes whose numbers must match the reference.
bool numericsGated(const Options& options);
// The first compiled output outside the tolerance ("output 'y': max rel 0.003 over rtol 0.0001 of its scale"), or
// empty when every output is within it.
std::string numericsMismatch(const EmulationReport& report, double rtol = kFp32RelTolerance);

}  // namespace kiln
