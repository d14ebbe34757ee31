// kiln inspect FILE [--json]: what is in a model, without compiling it.
#include <iostream>

#include "cli/args.h"
#include "cli/commands.h"
#include "io/model_loader.h"
#include "report/model_summary.h"

namespace kiln::cli {

int runInspect(const Argv& argv) {
  const Args args = parseArgs(argv, {{"--json"}, {}});
  if (args.positional.size() != 1) throw UsageError("usage: kiln inspect FILE [--json]");
  LoadedModel loaded = loadModel(args.positional[0]);
  const ModelSummary summary = summarizeModel(*loaded.model, loaded.inference, loaded.warnings);
  if (args.has("--json"))
    std::cout << summary.toJson().dump(2) << "\n";
  else
    std::cout << summary.toText();
  return 0;
}

}  // namespace kiln::cli
