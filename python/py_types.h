// The objects the module hands out that are not engine types: a loaded model, a compile's result.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/model.h"
#include "options/options.h"
#include "passes/pass_manager.h"

namespace kiln::py {

struct PyModel {
  std::string path;
  std::shared_ptr<Model> model;
  std::vector<std::string> warnings;
};

struct CompileResult {
  std::string path;
  Options options;
  std::shared_ptr<Model> compiled;  // the graph after the last pass run
  RunSummary summary;               // status, error, the passes' records
  int64_t runId = 0;                // in the history, when one was given
  std::string historyError;
};

}  // namespace kiln::py
