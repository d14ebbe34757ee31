#include "io/model_loader.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "io/model_path.h"
#include "io/om/om_reader.h"
#include "io/onnx/onnx_reader.h"
#include "ir/attribute_ranges.h"
#include "ir/verifier.h"
#include "options/options.h"

namespace kiln {

ModelFormat detectModelFormat(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  char magic[4] = {};
  if (f.read(magic, 4) && std::memcmp(magic, "IMOD", 4) == 0) return ModelFormat::AscendOm;
  const auto dot = path.find_last_of('.');
  const std::string ext = dot == std::string::npos ? "" : path.substr(dot);
  if (ext == ".om") return ModelFormat::AscendOm;
  if (ext == ".onnx" || ext == ".pb" || ext.empty()) return ModelFormat::Onnx;
  return ModelFormat::Onnx;  // ONNX has no magic; the parser decides
}

LoadLimits loadLimits(const Options& options, bool headless) {
  return {static_cast<uint64_t>(options.getInt(kMaxModelBytesKey)), headless};
}

namespace {

// An invalid attribute range (a stride of 0...) from any format: refused before inference and the kernels see it.
void refuseInvalidAttributes(const Graph& g, const std::string& path) {
  for (const Node* n : g.nodes()) {
    if (std::string problem = attributeRangeProblem(*n); !problem.empty())
      throw LoadError(path, "node '" + n->name() + "' (" + n->opType() + "): " + problem);
    for (const Graph* sg : n->subgraphs()) refuseInvalidAttributes(*sg, path);
  }
}

}  // namespace

LoadedModel loadModel(const std::string& path, const LoadLimits& limits) {
  const ModelPath where = parseModelPath(path);
  const std::string& file = where.file;
  std::error_code ec;
  // A FIFO, device or socket would block the first read (a hang) or never end: models are regular files.
  if (const auto st = std::filesystem::status(file, ec);
      !ec && std::filesystem::exists(st) && !std::filesystem::is_regular_file(st) && !std::filesystem::is_directory(st))
    throw LoadError(path, "not a regular file (a pipe, device or socket); give the model's file");
  if (const auto size = std::filesystem::file_size(file, ec); !ec && size > limits.maxModelBytes)
    throw LoadError(path, "file is " + std::to_string(size) + " bytes, above the limit of " +
                              std::to_string(limits.maxModelBytes) + " (max_model_bytes)");
  const ModelFormat format = detectModelFormat(file);
  if (where.modelIndex && format != ModelFormat::AscendOm)
    throw LoadError(path, "\"#" + std::to_string(*where.modelIndex) + "\" picks a model of a multi-model Ascend .om, "
                          "and this is not one");
  LoadedModel out;
  switch (format) {
    case ModelFormat::AscendOm: {
      om::OmImport imp = om::readOmFile(file, where.modelIndex.value_or(0), path);
      out.model = std::move(imp.model);
      out.warnings = std::move(imp.warnings);
      break;
    }
    case ModelFormat::Onnx:
    case ModelFormat::Unknown: {
      OnnxReadOptions ro;
      ro.maxFileBytes = std::min<uint64_t>(ro.maxFileBytes, limits.maxModelBytes);
      ro.weightsStayInFile = limits.weightsStayInFile;
      OnnxImport imp = readOnnxFile(file, ro);
      out.model = std::move(imp.model);
      out.warnings = std::move(imp.warnings);
      break;
    }
  }
  refuseInvalidAttributes(*out.model->graph, path);
  out.inference = inferShapes(*out.model);
  for (auto& problem : verifyModel(*out.model)) out.warnings.push_back("verifier: " + problem);
  return out;
}

}  // namespace kiln
