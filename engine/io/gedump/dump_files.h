#pragma once
// GE's graph dump files by their names, and a folder (or any set of files) of them sorted into the compilations
// they record.
//
// GE names each dump "ge_proto_" + index + "_" + suffix + ".txt" (ge.proto.ModelDef as protobuf text) and, for the
// same stage, "ge_onnx_" + index + "_" + suffix + ".pbtxt" (ONNX ModelProto text). Real files differ by release
// (reference: ascend-artifacts.md): the index is zero-padded to 5 or 8 digits (any width is read); the suffix is a
// stage ("Build"), a pass with more words ("OptimizeQuantGraph_FeGraphFusionAfter"), "graph_<id>_<Stage>", or — for
// AscendCL's single-op dumps — the op's name. So:
//   - the stage is the suffix without a leading "graph_<id>_";
//   - the graph is <id> where the name has one. A ge_proto file without one takes the id of the ge_onnx file of the
//     same index and stage (GE writes both for one stage); otherwise the files are told apart by the name of their
//     root graph, which GE keeps through a graph's stages (read from the file's first lines);
//   - a folder's subfolders (GE writes one per process, e.g. dfx/graph/<pid>_<n>/, whose indexes restart) are read
//     too, to kDumpFolderDepth levels, and never mixed with each other;
//   - where both formats hold one stage, the ge_proto file is imported (it has more: offsets, weights) and the
//     ge_onnx file is listed as skipped.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kiln::gedump {

enum class DumpKind { GeProto, GeOnnx };

inline constexpr int kDumpFolderDepth = 4;
inline constexpr size_t kMaxDumpFiles = 100000;  // entries looked at across the folders given

struct DumpFile {
  std::string path;
  DumpKind kind = DumpKind::GeProto;
  int64_t index = 0;
  std::string graphId;  // "" when the name has none
  std::string stage;    // the suffix without "graph_<id>_"
};

// By the file name alone; nullopt when it is not a GE dump name.
std::optional<DumpFile> parseDumpName(const std::string& path);

// The files of one compilation (one graph of one process), ordered by index.
struct DumpGroup {
  std::string label;  // "graph 11", "graph 'ge_default_..._1'", with the subfolder when there are several
  std::string folder; // the folder the files are in
  std::vector<DumpFile> files;
};

struct DumpListing {
  std::vector<DumpGroup> groups;     // in the order of their first file's folder and index
  std::vector<std::string> skipped;  // one line per file or kind of file left out, and why
  std::vector<std::string> others;   // files beside the dumps that are not dumps (fusion_result.json is looked for here)
};

// `paths`: folders and/or dump files. Throws LoadError naming the path when one cannot be read, or when none of
// them holds a dump.
DumpListing listDumps(const std::vector<std::string>& paths);

// The root graph's name as the dump's first lines give it ("" when they do not): reads at most the first 64 KiB.
std::string rootGraphName(const std::string& path, DumpKind kind);

}  // namespace kiln::gedump
