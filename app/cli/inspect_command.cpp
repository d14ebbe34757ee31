// kiln inspect FILE [--json] [--structure]: what is in a model, without compiling it; --structure prints the groups
// the workbench draws (name scopes, repeated blocks found in the graph, chunks) as an outline, --json carries them
// as "groups". FILE may also be one of Ascend's own files: a GE graph dump, an om -> JSON or an .om (read as
// models: io/model_loader.h), ATC's fusion_result.json (its fusion passes), a folder of GE graph dumps (the
// compilations it records), or a measured run from the Ascend profiler (a profile folder or its op_summary CSV).
#include <filesystem>
#include <iostream>

#include "cli/args.h"
#include "cli/commands.h"
#include "io/atc/fusion_result.h"
#include "io/gedump/dump_files.h"
#include "io/model_loader.h"
#include "io/msprof/msprof_profile.h"
#include "report/ge_files_report.h"
#include "report/ge_model_summary.h"
#include "report/model_structure.h"
#include "report/model_summary.h"
#include "report/profile_summary.h"

namespace kiln::cli {

int runInspect(const Argv& argv) {
  const Args args = parseArgs(argv, {{"--json", "--structure"}, {}});
  if (args.positional.size() != 1) throw UsageError("usage: kiln inspect FILE [--json] [--structure]");
  const std::string& path = args.positional[0];
  const bool json = args.has("--json");
  std::error_code ec;
  if ((std::filesystem::is_directory(path, ec) && msprof::isMeasuredProfile(path)) ||
      detectModelFormat(path) == ModelFormat::MsprofProfile) {
    const msprof::MeasuredProfile p = msprof::readMeasuredProfile(path);
    std::cout << (json ? profileSummaryJson(p).dump(2) + "\n" : profileSummaryText(p));
    return 0;
  }
  if (std::filesystem::is_directory(path, ec)) {
    const gedump::DumpListing listing = gedump::listDumps({path});
    std::cout << (json ? dumpListingJson(listing, path).dump(2) + "\n" : dumpListingText(listing, path));
    return 0;
  }
  if (detectModelFormat(path) == ModelFormat::FusionResult) {
    const atc::FusionResult r = atc::readFusionResult(path);
    std::cout << (json ? fusionResultJson(r, path).dump(2) + "\n" : fusionResultText(r, path));
    return 0;
  }
  LoadedModel loaded = loadModel(path);
  const ModelSummary summary = summarizeModel(*loaded.model, loaded.inference, loaded.warnings);
  const layout::ScopeTree structure = modelStructure(*loaded.model->graph);
  const GeModelSummary ge = summarizeGeModel(*loaded.model);
  if (json) {
    Json j = summary.toJson();
    j.set("groups", structureToJson(structure));
    if (ge.geGraph) j.set("ge_graph", geModelSummaryJson(ge));
    std::cout << j.dump(2) << "\n";
  } else if (args.has("--structure")) {
    std::cout << structureOutline(structure);
  } else {
    std::cout << summary.toText() << geModelSummaryText(ge);
  }
  return 0;
}

}  // namespace kiln::cli
