#pragma once
// A compile with the standard pipeline and default options, every pass recorded into a history: what the workbench
// does when it opens a model, for tests of what is read back.
#include <string>

#include "history/history_recorder.h"
#include "ir/model.h"
#include "options/options.h"
#include "passes/pass_manager.h"
#include "pipeline/standard_pipeline.h"

namespace kiln::testing {

struct RecordedCompile {
  RunSummary summary;
  int64_t runId = 0;
};

inline RecordedCompile compileRecorded(Model& model, HistoryDb& db, const std::string& modelPath = "model.onnx") {
  HistoryRecorder rec(db, modelPath);
  PassManager pm;
  const Options options;
  addStandardPasses(pm, options, {});
  pm.addObserver(&rec);
  RecordedCompile out;
  out.summary = pm.run(model, options);
  out.runId = rec.runId();
  return out;
}

}  // namespace kiln::testing
