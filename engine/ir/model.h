#pragma once
// A model: the main graph plus the metadata ONNX carries around it (opsets, producer, local functions).
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/shape_binding.h"

namespace kiln {

struct Model {
  int64_t irVersion = 8;
  std::string producerName, producerVersion, domain, docString;
  int64_t modelVersion = 0;
  std::map<std::string, int64_t> opsets;  // domain ("" = ai.onnx) -> version
  std::vector<std::pair<std::string, std::string>> metadata;
  // Model-local functions kept as serialized FunctionProto bytes so they survive a round trip untouched.
  std::vector<std::string> functionProtos;
  std::vector<std::string> localFunctionNames;  // "domain:name" of each local function
  std::shared_ptr<IdSource> ids = std::make_shared<IdSource>();
  std::unique_ptr<Graph> graph = std::make_unique<Graph>(ids);
  // Where the model came from (for messages and for resolving external data).
  std::string sourcePath;
  // Already compiled by another compiler (an Ascend .om): its streams, events and memory offsets are that
  // compiler's, carried in the same annotations Kiln's Stage 2/3 passes write, and the PassManager runs no passes
  // over it (recompiling would replace the plan the file holds with Kiln's own).
  bool precompiled = false;
  // The extents InputShapeBinding gave the inputs' symbolic dimensions (empty before it runs or without symbols):
  // what the CLI prints, the history records and the workbench shows.
  ShapeBinding binding;

  int64_t opsetFor(const std::string& opDomain) const;
};

}  // namespace kiln
