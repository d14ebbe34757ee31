#include "batch/batch_case.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>
#include <stdexcept>

#include "util/load_error.h"
#include "io/model_path.h"
#include "io/om/om_reader.h"

namespace kiln {

namespace fs = std::filesystem;

std::vector<std::string> findModels(const std::vector<std::string>& paths) {
  std::vector<std::string> models;
  for (const std::string& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<std::string> found;
      for (auto it = fs::recursive_directory_iterator(p, fs::directory_options::skip_permission_denied, ec);
           !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        const fs::path& f = it->path();
        if (!(f.extension() == ".onnx" || f.extension() == ".om") || !it->is_regular_file(ec)) continue;
        const std::string file = f.lexically_normal().string();
        // Every model of a multi-model .om is a model of the batch ("FILE.om#N").
        const size_t count = f.extension() == ".om" ? om::omModelCount(file) : 1;
        for (size_t k = 0; k < count; ++k) found.push_back(count > 1 ? file + "#" + std::to_string(k) : file);
      }
      if (ec) throw LoadError(p, "cannot list: " + ec.message());
      if (found.empty()) throw LoadError(p, "no .onnx or .om models in this directory");
      models.insert(models.end(), found.begin(), found.end());
    } else if (fs::exists(p, ec) || modelPathExists(p)) {  // also "FILE.om#N", one model of a multi-model .om
      // A file is taken as it is, whatever its extension: an unreadable one fails its own cases, not the batch.
      models.push_back(fs::path(p).lexically_normal().string());
    } else {
      throw LoadError(p, "no such file or directory");
    }
  }
  std::sort(models.begin(), models.end());
  models.erase(std::unique(models.begin(), models.end()), models.end());
  return models;
}

std::vector<OptionSet> loadOptionSets(const std::vector<std::string>& files) {
  std::vector<OptionSet> sets;
  std::set<std::string> names;
  for (const std::string& f : files) {
    OptionSet s;
    s.path = f;
    s.name = fs::path(f).stem().string();
    if (!names.insert(s.name).second)
      throw LoadError(f, "another option set is also named '" + s.name + "' (reports match option sets by name)");
    s.options = Options::fromFile(f);
    sets.push_back(std::move(s));
  }
  return sets;
}

namespace {

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string safeName(const std::string& s) {
  std::string out;
  for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') ? c : '_';
  return out.substr(0, 60);
}

}  // namespace

std::string caseId(const std::string& model, const std::string& optionSet) {
  char hex[8];
  std::snprintf(hex, sizeof hex, "%06llx",
                static_cast<unsigned long long>(fnv1a(model + '\n' + optionSet) & 0xffffff));
  const ModelPath where = parseModelPath(model);  // "two.om#1" -> "two_1"
  const std::string stem = fs::path(where.file).stem().string() +
                           (where.modelIndex ? "_" + std::to_string(*where.modelIndex) : std::string());
  return safeName(stem) + "." + safeName(optionSet) + "-" + hex;
}

std::vector<BatchCase> batchCases(const std::vector<std::string>& models, const std::vector<OptionSet>& sets) {
  std::vector<BatchCase> cases;
  for (const std::string& m : models)
    for (const OptionSet& s : sets) cases.push_back({m, &s, caseId(m, s.name)});
  std::sort(cases.begin(), cases.end(), [](const BatchCase& a, const BatchCase& b) {
    return std::tie(a.model, a.options->name) < std::tie(b.model, b.options->name);
  });
  return cases;
}

std::vector<BatchCase> shardCases(const std::vector<BatchCase>& cases, int index, int count) {
  std::vector<BatchCase> slice;
  for (size_t i = static_cast<size_t>(index - 1); i < cases.size(); i += static_cast<size_t>(count))
    slice.push_back(cases[i]);
  return slice;
}

std::pair<int, int> parseShard(const std::string& text) {
  int i = 0, n = 0;
  char tail = 0;
  if (std::sscanf(text.c_str(), "%d/%d%c", &i, &n, &tail) != 2 || n < 1 || n > 10000 || i < 1 || i > n)
    throw std::invalid_argument("--shard takes I/N with 1 <= I <= N (e.g. 2/4), not '" + text + "'");
  return {i, n};
}

}  // namespace kiln
