#include "plugin/plugin_loader.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "kiln_plugin.h"
#include "passes/pass_manager.h"

namespace kiln {
namespace {

class CollectingRegistry final : public plugin::Registry {
 public:
  explicit CollectingRegistry(LoadedPlugin& p) : p_(p) {}
  void addPass(Stage stage, std::function<std::unique_ptr<Pass>()> factory) override {
    p_.passes.emplace_back(stage, std::move(factory));
  }
  void addOp(OpDef def) override {
    const std::string what = def.domain + ":" + def.type;
    if (!OpRegistry::global().add(std::move(def))) throw std::runtime_error("may not redefine standard op " + what);
    ++p_.ops;
  }
  void addFusionRule(std::shared_ptr<FusionRule> rule) override {
    if (!rule) throw std::runtime_error("addFusionRule given no rule");
    p_.fusionRules.push_back(std::move(rule));
  }
  void setName(std::string name) override { p_.name = std::move(name); }

 private:
  LoadedPlugin& p_;
};

void loadOne(const std::string& path, PluginSet& set) {
  // Libraries stay loaded for the life of the process: their passes' code must outlive any PassManager.
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* err = ::dlerror();
    set.errors.push_back("plugin " + path + ": cannot load (" + (err ? err : "unknown error") + ")");
    return;
  }
  using VersionFn = int (*)();
  using RegisterFn = void (*)(plugin::Registry&);
  auto version = reinterpret_cast<VersionFn>(::dlsym(handle, "kiln_plugin_api_version"));
  auto reg = reinterpret_cast<RegisterFn>(::dlsym(handle, "kiln_plugin_register"));
  if (!version || !reg) {
    set.errors.push_back("plugin " + path + ": missing entry point " +
                         (!version ? "kiln_plugin_api_version" : "kiln_plugin_register") + "; not a Kiln plugin");
    ::dlclose(handle);
    return;
  }
  const int v = version();
  // Version 2 only appended addFusionRule to the registry, so a version-1 plugin's calls still land right.
  if (v != KILN_PLUGIN_API_VERSION && v != 1) {
    set.errors.push_back("plugin " + path + ": built for plugin API version " + std::to_string(v) +
                         ", this Kiln provides version " + std::to_string(KILN_PLUGIN_API_VERSION));
    ::dlclose(handle);
    return;
  }
  LoadedPlugin p;
  p.path = path;
  p.name = std::filesystem::path(path).filename().string();
  try {
    CollectingRegistry registry(p);
    reg(registry);
  } catch (const std::exception& e) {
    set.errors.push_back("plugin " + path + ": registration failed: " + e.what());
    return;
  }
  set.plugins.push_back(std::move(p));
}

}  // namespace

void PluginSet::addPassesTo(PassManager& pm) const {
  for (const auto& p : plugins)
    for (const auto& [stage, factory] : p.passes) pm.add(stage, factory());
  pm.sortByStage();
}

FusionRuleList PluginSet::fusionRules() const {
  FusionRuleList rules;
  for (const auto& p : plugins) rules.insert(rules.end(), p.fusionRules.begin(), p.fusionRules.end());
  return rules;
}

PluginSet loadPlugins(const std::vector<std::string>& explicitPaths, bool useEnvironment) {
  PluginSet set;
  std::vector<std::string> paths = explicitPaths;
  if (useEnvironment)
    if (const char* env = std::getenv("KILN_PLUGIN_PATH")) {
      std::stringstream ss(env);
      std::string item;
      while (std::getline(ss, item, ':')) {
        if (item.empty()) continue;
        std::error_code ec;
        if (std::filesystem::is_directory(item, ec)) {
          std::vector<std::string> found;
          for (const auto& e : std::filesystem::directory_iterator(item, ec))
            if (e.path().extension() == ".so") found.push_back(e.path().string());
          std::sort(found.begin(), found.end());
          paths.insert(paths.end(), found.begin(), found.end());
        } else {
          paths.push_back(item);
        }
      }
    }
  for (const auto& p : paths) loadOne(p, set);
  return set;
}

}  // namespace kiln
