#include "io/model_loader.h"

#include <cstring>
#include <fstream>

#include "io/om/om_reader.h"
#include "io/onnx/onnx_reader.h"
#include "ir/verifier.h"

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

LoadedModel loadModel(const std::string& path) {
  LoadedModel out;
  switch (detectModelFormat(path)) {
    case ModelFormat::AscendOm: {
      om::OmImport imp = om::readOmFile(path);
      out.model = std::move(imp.model);
      out.warnings = std::move(imp.warnings);
      break;
    }
    case ModelFormat::Onnx:
    case ModelFormat::Unknown: {
      OnnxImport imp = readOnnxFile(path);
      out.model = std::move(imp.model);
      out.warnings = std::move(imp.warnings);
      break;
    }
  }
  out.inference = inferShapes(*out.model);
  for (auto& problem : verifyModel(*out.model)) out.warnings.push_back("verifier: " + problem);
  return out;
}

}  // namespace kiln
