#pragma once
// What `kiln inspect` says about the files of Ascend's toolchain that are not one model: ATC's fusion_result.json
// (which fusion passes matched and took effect, per graph) and a folder of GE graph dumps (the compilations it
// records and their stages). Text for people, JSON for scripts.
#include <string>

#include "util/json.h"

namespace kiln::atc {
struct FusionResult;
}  // namespace kiln::atc

namespace kiln::gedump {
struct DumpListing;
}  // namespace kiln::gedump

namespace kiln {

// {"file", "layout", "graphs": [...], "fusion_passes": [{graph, kind: "graph"|"ub", pass, match, effect}],
//  "warnings": [...]}
Json fusionResultJson(const atc::FusionResult& r, const std::string& file);
std::string fusionResultText(const atc::FusionResult& r, const std::string& file);

// {"folder", "compilations": [{"graph", "folder", "stages": [{"index", "stage", "file", "format"}]}],
//  "skipped": [...], "other_files": N}
Json dumpListingJson(const gedump::DumpListing& l, const std::string& path);
std::string dumpListingText(const gedump::DumpListing& l, const std::string& path);

}  // namespace kiln
