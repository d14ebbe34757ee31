#include "io/model_loader.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "io/atc/fusion_result.h"
#include "io/atc/om_json_reader.h"
#include "io/gedump/ge_dump_reader.h"
#include "io/model_path.h"
#include "io/om/om_reader.h"
#include "io/onnx/onnx_reader.h"
#include "ir/attribute_ranges.h"
#include "io/msprof/msprof_profile.h"
#include "ir/verifier.h"
#include "options/options.h"

namespace kiln {

ModelFormat detectModelFormat(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return ModelFormat::Unknown;  // a pipe's first read would block
  std::ifstream f(path, std::ios::binary);
  std::string head(64 * 1024, '\0');
  f.read(head.data(), std::streamsize(head.size()));
  head.resize(static_cast<size_t>(f.gcount()));
  if (head.size() >= 4 && std::memcmp(head.data(), "IMOD", 4) == 0) return ModelFormat::AscendOm;
  const auto dot = path.find_last_of('.');
  const std::string ext = dot == std::string::npos ? "" : path.substr(dot);
  if (ext == ".om") return ModelFormat::AscendOm;
  if (ext == ".csv" && msprof::isMeasuredProfile(path)) return ModelFormat::MsprofProfile;
  if (ext == ".json" && msprof::looksLikeMsprofTrace(head)) return ModelFormat::MsprofProfile;
  switch (gedump::sniffText(head)) {
    case gedump::TextKind::GeProto: return ModelFormat::GeDump;
    case gedump::TextKind::OnnxText:
      // GE's ONNX-text dumps say so (producer "GE", op types "ge:<Type>"); other ONNX text is a plain model.
      return head.find("producer_name: \"GE\"") != std::string::npos || head.find("op_type: \"ge:") != std::string::npos
                 ? ModelFormat::GeOnnxDump
                 : ModelFormat::OnnxText;
    case gedump::TextKind::Json:
      if (atc::looksLikeFusionResult(head)) return ModelFormat::FusionResult;
      return head.find_first_not_of(" \t\r\n\xEF\xBB\xBF") != std::string::npos &&
                     head[head.find_first_not_of(" \t\r\n\xEF\xBB\xBF")] == '{'
                 ? ModelFormat::AtcJson
                 : ModelFormat::OtherJson;
    case gedump::TextKind::Unknown: break;
  }
  return ModelFormat::Onnx;  // binary ONNX has no magic; the parser decides
}

std::string modelFormatName(ModelFormat f) {
  switch (f) {
    case ModelFormat::Onnx: return "an ONNX model";
    case ModelFormat::OnnxText: return "an ONNX model in protobuf text";
    case ModelFormat::AscendOm: return "an Ascend offline model (.om)";
    case ModelFormat::GeDump: return "a GE graph dump";
    case ModelFormat::GeOnnxDump: return "a GE graph dump in ONNX text";
    case ModelFormat::AtcJson: return "an atc --mode=1 JSON of an .om";
    case ModelFormat::FusionResult: return "ATC's fusion_result.json";
    case ModelFormat::MsprofProfile: return "a profile of a measured run (msprof)";
    case ModelFormat::OtherJson: return "a JSON file that holds no model";
    case ModelFormat::Unknown: break;
  }
  return "a file of unknown format";
}

bool isGeFormat(ModelFormat f) {
  return f == ModelFormat::AscendOm || f == ModelFormat::GeDump || f == ModelFormat::GeOnnxDump ||
         f == ModelFormat::AtcJson;
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

// LoadLimits::alignWeights on the main graph's initializers.
void alignMisalignedWeights(Graph& g) {
  for (Value* v : g.initializers()) {
    const Tensor* t = v->constant();
    const int elementBytes = t ? dtypeSize(t->dtype()) : 0;
    if (!t || elementBytes <= 1 || t->byteSize() == 0 || reinterpret_cast<uintptr_t>(t->data()) % elementBytes == 0)
      continue;
    const bool onlyGathered = v->hasUses() && std::all_of(v->uses().begin(), v->uses().end(), [](const Use& u) {
      return u.index == 0 && u.node->domain().empty() && u.node->opType() == "Gather";
    });
    if (onlyGathered) continue;
    auto copy = std::make_shared<HeapStorage>(t->byteSize(), HeapStorage::Start::Unset);
    std::memcpy(copy->data(), t->data(), t->byteSize());
    v->setConstant(Tensor(t->dtype(), t->dims(), std::move(copy), 0));  // the mapped slice's pages go with it
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
    case ModelFormat::GeDump:
    case ModelFormat::GeOnnxDump: {
      const std::string text = gedump::readDumpText(file);
      out.model = format == ModelFormat::GeDump ? gedump::readGeProtoDump(text, path, out.warnings)
                                                : gedump::readGeOnnxDump(text, path, out.warnings);
      break;
    }
    case ModelFormat::AtcJson: {
      std::error_code sizeError;
      if (std::filesystem::file_size(file, sizeError) > atc::kMaxOmJsonBytes)
        throw LoadError(path, "larger than the 512 MiB Kiln reads of an om -> JSON");
      out.model = atc::readOmJson(gedump::readDumpText(file), path, out.warnings);
      break;
    }
    case ModelFormat::FusionResult:
      throw LoadError(path, "is ATC's fusion_result.json (which fusion passes ran), not a model: `kiln inspect` shows "
                            "it, and `kiln history import` attaches it to the GE run beside it");
    case ModelFormat::MsprofProfile:
      throw LoadError(path, "is the profile of a measured run, not a model: `kiln inspect` summarises it, and "
                            "`kiln history import` records it beside a run of its model");
    case ModelFormat::OtherJson:
      throw LoadError(path, "is JSON but no model: Kiln reads an `atc --mode=1` JSON (an object with a \"graph\" "
                            "list) and ATC's fusion_result.json; this is neither");
    case ModelFormat::OnnxText: {
      OnnxReadOptions ro;
      ro.maxFileBytes = std::min<uint64_t>(ro.maxFileBytes, limits.maxModelBytes);
      OnnxImport imp = readOnnxText(file, ro);
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
  if (limits.alignWeights) alignMisalignedWeights(*out.model->graph);
  out.inference = inferShapes(*out.model);
  for (auto& problem : verifyModel(*out.model)) out.warnings.push_back("verifier: " + problem);
  return out;
}

}  // namespace kiln
