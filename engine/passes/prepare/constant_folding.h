#pragma once
// ConstantFolding (prepare stage; GE's ConstantFoldingPass): a node whose inputs are all constants is evaluated at
// compile time with the reference kernels and replaced by initializers. Constant nodes become initializers too.
//
// Options: oo_constant_folding (off: the pass does nothing), constant_folding_max_bytes (an output larger than
// this is not materialised, so e.g. a ConstantOfShape that fills gigabytes stays a node).
// Counters: folded, constants_to_initializers, skipped_too_large, evaluation_errors.
#include <memory>

#include "passes/pass.h"

namespace kiln {

inline constexpr const char* kConstantFoldingMaxBytesKey = "constant_folding_max_bytes";
// Used when the option schema has no constant_folding_max_bytes key.
inline constexpr int64_t kConstantFoldingDefaultMaxBytes = int64_t{64} << 20;

std::unique_ptr<Pass> makeConstantFoldingPass();

}  // namespace kiln
