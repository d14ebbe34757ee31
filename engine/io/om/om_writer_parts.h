#pragma once
// The pieces of an .om before they become partitions, for writers that combine several compiled graphs into one
// file (om_gear_writer: one branch per dynamic gear). Private to io/om (it exposes the generated protobuf types).
#include <cstdint>
#include <string>

#include "io/om/ge_ir.pb.h"
#include "io/om/om_container.h"
#include "io/om/task.pb.h"

namespace kiln {
struct Model;
class Options;
}  // namespace kiln

namespace kiln::om {

struct OmParts {
  ge::proto::ModelDef model;  // graph(0) the main graph, further graphs its subgraphs
  domi::ModelTaskDef tasks;
  std::string weights;        // WEIGHTS_DATA; Const ops' data_offset and their readers' input_i index it
  OmInOutInfo io;
  int64_t memorySize = 0, arenaBytes = 0;
};

// Throws like buildOmFile.
OmParts buildOmParts(const Model& compiled, const Options& options);
std::string assembleOmFile(const OmParts& parts, const Options& options);
void writeBytesFile(const std::string& bytes, const std::string& path);

}  // namespace kiln::om
