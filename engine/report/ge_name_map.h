#pragma once
// Names that differ between GE and Kiln for the same thing, for comparing a GE run with a Kiln compile:
//   - GE's fusion passes (ATC's fusion_result.json, a fused op's pass_name) -> the Kiln rule making the same rewrite,
//     from resources/ge/fusion_pass_map.json (found as the SoC profiles are: $KILN_GE_DIR, share/kiln/ge next to
//     the executable, the install and source trees), extended by the file $KILN_FUSION_MAP names, whose entries win;
//   - Kiln's op types -> GE's (the names Kiln's .om writer gives them, io/om/om_writer.h), the vocabulary both
//     compiled graphs' op histograms are counted in.
#include <map>
#include <string>

namespace kiln {

class Node;

// GE pass -> Kiln rule. Throws LoadError naming the file when a map file is not the shape above (a user's extension
// must not be silently ignored); an absent resources directory gives an empty map.
const std::map<std::string, std::string>& fusionPassMap();
// The Kiln rule for a GE pass, or "" when the map has none.
std::string kilnRuleForGePass(const std::string& gePass);

// The op's type as GE names it: a GE op's own type, else the .om writer's name for the Kiln op, else its own type.
std::string geVocabularyType(const Node& n);

}  // namespace kiln
