#pragma once
// kiln compile over several shape variants: gears (dynamic_batch_size, dynamic_image_size, dynamic_dims) and
// --sweep SYMBOL=V1,V2,... (see compile_variants.cpp).
#include "cli/args.h"
#include "options/options.h"

namespace kiln::cli {

// The arguments or options ask for more than one compile.
bool wantsVariants(const Args& args, const Options& options);
int runCompileVariants(const Args& args, const Options& options);

}  // namespace kiln::cli
