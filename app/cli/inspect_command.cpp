// kiln inspect FILE [--json] [--structure]: what is in a model, without compiling it; --structure prints the groups
// the workbench draws (name scopes, repeated blocks found in the graph, chunks) as an outline, --json carries them
// as "groups".
#include <iostream>

#include "cli/args.h"
#include "cli/commands.h"
#include "io/model_loader.h"
#include "report/model_structure.h"
#include "report/model_summary.h"

namespace kiln::cli {

int runInspect(const Argv& argv) {
  const Args args = parseArgs(argv, {{"--json", "--structure"}, {}});
  if (args.positional.size() != 1) throw UsageError("usage: kiln inspect FILE [--json] [--structure]");
  LoadedModel loaded = loadModel(args.positional[0]);
  const ModelSummary summary = summarizeModel(*loaded.model, loaded.inference, loaded.warnings);
  const layout::ScopeTree structure = modelStructure(*loaded.model->graph);
  if (args.has("--json")) {
    Json j = summary.toJson();
    j.set("groups", structureToJson(structure));
    std::cout << j.dump(2) << "\n";
  } else if (args.has("--structure")) {
    std::cout << structureOutline(structure);
  } else {
    std::cout << summary.toText();
  }
  return 0;
}

}  // namespace kiln::cli
