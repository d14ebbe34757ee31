#pragma once
// Which SoC a compiled model is timed on. A model Kiln compiles is timed on the options' soc_version; an .om was
// built by ATC for the SoC its soc_version attribute names, and timing it on another would misstate its run.
#include <string>

namespace kiln {

struct Model;
class Options;

// The .om's own soc_version when the model is precompiled and names a known profile (only a plain profile name is
// taken from the file, never a path); otherwise the options' soc_version.
std::string socVersionFor(const Model& m, const Options& options);

}  // namespace kiln
