#include "fuzz_targets.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "history/history_db.h"
#include "history/history_reader.h"
#include "io/model_loader.h"
#include "io/numpy/npz_reader.h"
#include "io/atc/fusion_result.h"
#include "io/atc/om_json_reader.h"
#include "io/gedump/ge_dump_reader.h"
#include "emulator/timing/calibration.h"
#include "io/msprof/msprof_profile.h"
#include "io/om/om_reader.h"
#include "io/onnx/onnx_reader.h"
#include "io/tensor_file.h"
#include "ir/opdefs/shape_inference.h"
#include "ir/tensor.h"
#include "ir/verifier.h"
#include "memory/trace_csv.h"
#include "options/options.h"
#include "report/profile_summary.h"

namespace kiln::fuzz {
namespace {

std::string bytesOf(const uint8_t* data, size_t size) { return std::string(reinterpret_cast<const char*>(data), size); }

// Readers that only take a path get the bytes through one scratch file per process (and file name), in a directory
// that goes when the process ends normally (a fuzzer's run, the regression test; one a timeout kills stays).
struct ScratchDir {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("kiln_fuzz_" + std::to_string(::getpid()));
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

std::string scratchFile(const std::string& name, const uint8_t* data, size_t size) {
  static const ScratchDir dir;
  std::filesystem::create_directories(dir.path);
  const std::string path = (dir.path / name).string();
  std::filesystem::remove(path + "-wal");
  std::filesystem::remove(path + "-shm");
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return path;
}

// What the loader does after parsing: inference and the verifier must survive whatever the reader accepted.
void afterImport(Model& m) {
  inferShapes(m);
  verifyModel(m);
}

void onnx(const uint8_t* data, size_t size) {
  try {
    OnnxImport imp = readOnnxBytes(bytesOf(data, size), "fuzz.onnx", "", {.runChecker = false});
    afterImport(*imp.model);
  } catch (const LoadError&) {
  }
  // As the headless commands read a file: large initializers stay in the mapped file (the wire walk of
  // io/onnx/initializer_bytes_in_file.h runs on the untrusted bytes first).
  try {
    const std::string path = scratchFile("fuzz.onnx", data, size);
    OnnxImport imp = readOnnxFile(path, {.runChecker = false, .weightsStayInFile = true});
    afterImport(*imp.model);
  } catch (const LoadError&) {
  }
}

void om(const uint8_t* data, size_t size) {
  try {
    om::OmImport imp = om::readOmBytes(std::make_shared<OwnedStorage>(bytesOf(data, size)), "fuzz.om");
    afterImport(*imp.model);
  } catch (const LoadError&) {
  }
}

void geDump(const uint8_t* data, size_t size) {
  try {
    std::vector<std::string> warnings;
    auto m = gedump::readGeProtoDump(bytesOf(data, size), "ge_proto_00000001_graph_1_Build.txt", warnings);
    afterImport(*m);
  } catch (const LoadError&) {
  }
}

void geOnnx(const uint8_t* data, size_t size) {
  try {
    std::vector<std::string> warnings;
    auto m = gedump::readGeOnnxDump(bytesOf(data, size), "ge_onnx_00000001_graph_1_Build.pbtxt", warnings);
    afterImport(*m);
  } catch (const LoadError&) {
  }
}

void omJson(const uint8_t* data, size_t size) {
  try {
    std::vector<std::string> warnings;
    auto m = atc::readOmJson(bytesOf(data, size), "fuzz.om.json", warnings);
    afterImport(*m);
  } catch (const LoadError&) {
  }
}

void fusionResult(const uint8_t* data, size_t size) {
  try {
    atc::parseFusionResult(bytesOf(data, size), "fusion_result.json");
  } catch (const LoadError&) {
  }
}

// ONNX written as protobuf text, through the generous text reader and then the ONNX importer.
void onnxText(const uint8_t* data, size_t size) {
  try {
    OnnxImport imp = readOnnxText(scratchFile("fuzz.pbtxt", data, size), {.runChecker = false});
    afterImport(*imp.model);
  } catch (const LoadError&) {
  }
}

// A profiler's op_summary CSV through the profile reader and the summary kiln inspect prints.
void msprofCsv(const uint8_t* data, size_t size) {
  try {
    const msprof::MeasuredProfile p = msprof::readMeasuredProfile(scratchFile("op_summary_fuzz.csv", data, size));
    profileSummaryText(p);
    // Every task's shapes, types and formats costed as kiln calibrate does (the profile's own numbers, untrusted).
    try {
      calibration::calibrate({p}, SocProfile{});
    } catch (const std::runtime_error&) {  // nothing placeable: said, not a crash
    }
  } catch (const LoadError&) {
  }
}

// msprof's Chrome trace given by itself (the reader a folder without task CSVs falls back to).
void msprofTrace(const uint8_t* data, size_t size) {
  try {
    const msprof::MeasuredProfile p = msprof::readMeasuredProfile(scratchFile("msprof_fuzz.json", data, size));
    profileSummaryText(p);
  } catch (const LoadError&) {
  }
}

void options(const uint8_t* data, size_t size) {
  try {
    Options::fromFile(scratchFile("options.json", data, size));
  } catch (const LoadError&) {
  } catch (const OptionError&) {
  }
}

void traceCsv(const uint8_t* data, size_t size) {
  try {
    memory::parseTraceCsv(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.csv");
  } catch (const LoadError&) {
  }
}

void tensorPb(const uint8_t* data, size_t size) {
  try {
    readTensorBytes(bytesOf(data, size), "fuzz.pb");
  } catch (const LoadError&) {
  }
}

void npz(const uint8_t* data, size_t size) {
  try {
    readNpz(scratchFile("fuzz.npz", data, size));
  } catch (const LoadError&) {
  }
}

void history(const uint8_t* data, size_t size) {
  try {
    HistoryDb db(scratchFile("fuzz.db", data, size), HistoryDb::Mode::ReadOnly);
    // What the workbench does after opening: list the runs, then read and diff the passes of the first few.
    HistoryReader reader(db);
    const auto runs = reader.listRuns();
    for (size_t r = 0; r < runs.size() && r < 2; ++r) {
      const auto passes = reader.passes(runs[r].id);
      for (size_t p = 0; p < passes.size() && p < 4; ++p) {
        reader.graphAt(runs[r].id, passes[p].seq);
        if (p > 0) reader.diff(runs[r].id, passes[p].seq);
      }
      reader.fusedNodeRows(runs[r].id);
    }
  } catch (const HistoryError&) {  // a database that opened but whose rows are not what Kiln wrote
  } catch (const LoadError&) {
  }
}

}  // namespace

const std::vector<Target>& targets() {
  static const std::vector<Target> all = {{"onnx", onnx},         {"om", om},
                                          {"ge_dump", geDump},    {"options", options},
                                          {"trace_csv", traceCsv}, {"tensor_pb", tensorPb},
                                          {"npz", npz},           {"history", history},
                                          {"ge_onnx", geOnnx},    {"om_json", omJson},
                                          {"fusion_result", fusionResult}, {"onnx_text", onnxText},
                                          {"msprof_csv", msprofCsv},
                                          {"msprof_trace", msprofTrace}};
  return all;
}

const Target* findTarget(const std::string& name) {
  for (const Target& t : targets())
    if (name == t.name) return &t;
  return nullptr;
}

}  // namespace kiln::fuzz
