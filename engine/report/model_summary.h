#pragma once
// What `kiln inspect` reports about a model: producer, opsets, inputs/outputs, node counts, op histogram,
// parameters, largest tensors, unsupported ops and warnings. Built from the IR after import and inference.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "util/json.h"

namespace kiln {

struct Model;
struct InferenceReport;

struct ModelSummary {
  struct Port {
    std::string name, type;
  };
  struct TensorEntry {
    std::string name, type;
    int64_t bytes = 0;
  };
  std::string file, producer, irVersion;
  std::map<std::string, int64_t> opsets;
  std::vector<Port> inputs, outputs;
  int64_t nodes = 0, mainGraphNodes = 0, subgraphs = 0;
  std::vector<std::pair<std::string, int64_t>> ops;  // by count, descending
  int64_t parameters = 0, parameterBytes = 0, parameterTensors = 0;
  std::vector<TensorEntry> largestTensors;
  std::map<std::string, int64_t> unsupportedOps;  // ops Kiln has no definition for
  // GE's ops (an .om, a dump): their shapes come from the file, so they are not "unsupported"; the note says whether
  // the emulator runs the type ("GE op") or not ("GE op, no semantics in Kiln: not run").
  std::map<std::string, std::string> opNotes;
  std::map<std::string, int64_t> computeUnits;  // unit -> node count
  std::map<std::string, int64_t> formats;       // layout -> tensor values in it (shown when any is not ND)
  std::vector<std::pair<std::string, std::string>> metadata;  // the model's metadata entries
  std::vector<std::string> warnings;

  Json toJson() const;
  std::string toText() const;
};

// `warnings` are the import warnings; inference's and the verifier's are added.
ModelSummary summarizeModel(const Model& model, const InferenceReport& inference,
                            const std::vector<std::string>& warnings, size_t largestCount = 10);

}  // namespace kiln
