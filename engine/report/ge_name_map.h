#pragma once
// Names that differ between GE and Kiln for the same thing, for comparing a GE run with a Kiln compile:
//   - GE's fusion passes (ATC's fusion_result.json, a fused op's pass_name) -> the Kiln rule making the same rewrite,
//     from resources/ge/fusion_pass_map.json (found as the SoC profiles are: $KILN_GE_DIR, share/kiln/ge next to
//     the executable, the install and source trees), extended by the file $KILN_FUSION_MAP names, whose entries win;
// (Kiln's op types -> GE's is om::geVocabularyType in io/om/om_writer.h.)
#include <map>
#include <string>

namespace kiln {

// GE pass -> Kiln rule. Throws LoadError naming the file when a map file is not the shape above (a user's extension
// must not be silently ignored); an absent resources directory gives an empty map.
const std::map<std::string, std::string>& fusionPassMap();
// The Kiln rule for a GE pass, or "" when the map has none.
std::string kilnRuleForGePass(const std::string& gePass);

}  // namespace kiln
