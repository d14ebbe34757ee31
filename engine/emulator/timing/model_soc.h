#pragma once
// Which SoC a compiled model is timed on. A model Kiln compiles is timed on the options' soc_version; an .om was
// built by ATC for the SoC its soc_version attribute names, and timing it on another would misstate its run.
#include <string>

namespace kiln {

struct Model;
class Options;

// The profile to time on (a name or a .json path, for SocProfile::load): the options' soc_profile when set (the
// user's explicit choice, a calibrated profile say); else the .om's own soc_version when the model is precompiled
// and names a known profile (only a plain profile name is taken from the file, never a path); else soc_version.
std::string socVersionFor(const Model& m, const Options& options);

}  // namespace kiln
