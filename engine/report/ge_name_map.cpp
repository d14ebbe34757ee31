#include "report/ge_name_map.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "util/json.h"
#include "util/load_error.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

constexpr uintmax_t kMaxMapBytes = 1 << 20;

void readInto(const std::string& path, std::map<std::string, std::string>& out) {
  std::error_code ec;
  const uintmax_t size = fs::file_size(path, ec);
  if (ec) throw LoadError(path, "cannot read: " + ec.message());
  if (size > kMaxMapBytes) throw LoadError(path, "larger than the 1 MiB a fusion pass map may be");
  std::ifstream in(path, std::ios::binary);
  std::string text(static_cast<size_t>(size), '\0');
  in.read(text.data(), std::streamsize(size));
  Json j;
  try {
    j = Json::parse(text, 16);
  } catch (const JsonError& e) {
    throw LoadError(path, std::string("not valid JSON: ") + e.what());
  }
  const Json* passes = j.isObject() ? j.find("fusion_passes") : nullptr;
  if (!passes || !passes->isObject()) throw LoadError(path, "has no \"fusion_passes\" object of GE pass -> Kiln rule");
  for (const auto& [ge, kilnRule] : passes->asObject()) {
    if (!kilnRule.isString()) throw LoadError(path, "fusion_passes." + ge + " is not a string (a Kiln rule's name)");
    out[ge] = kilnRule.asString();
  }
}

std::vector<std::string> searchPath() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("KILN_GE_DIR"); env && *env) dirs.push_back(env);
  std::error_code ec;
  if (const auto exe = fs::read_symlink("/proc/self/exe", ec); !ec)
    dirs.push_back((exe.parent_path().parent_path() / "share" / "kiln" / "ge").string());
#ifdef KILN_GE_INSTALL_DIR
  dirs.push_back(KILN_GE_INSTALL_DIR);
#endif
#ifdef KILN_GE_SOURCE_DIR
  dirs.push_back(KILN_GE_SOURCE_DIR);
#endif
  return dirs;
}

}  // namespace

const std::map<std::string, std::string>& fusionPassMap() {
  static std::once_flag once;
  static std::map<std::string, std::string> map;
  static std::string error, errorFile;
  std::call_once(once, [] {
    try {
      for (const std::string& dir : searchPath()) {
        const fs::path f = fs::path(dir) / "fusion_pass_map.json";
        std::error_code ec;
        if (!fs::is_regular_file(f, ec)) continue;
        readInto(f.string(), map);
        break;
      }
      if (const char* extra = std::getenv("KILN_FUSION_MAP"); extra && *extra) readInto(extra, map);
    } catch (const LoadError& e) {
      error = e.what();
      errorFile = e.file();
    }
  });
  if (!error.empty()) throw LoadError(errorFile, error);
  return map;
}

std::string kilnRuleForGePass(const std::string& gePass) {
  const auto& m = fusionPassMap();
  auto it = m.find(gePass);
  return it == m.end() ? std::string() : it->second;
}


}  // namespace kiln
