#pragma once
// Loads plugins (see plugins/kiln_plugin.h) from explicit paths only: `--plugin PATH` and KILN_PLUGIN_PATH
// (colon-separated files or folders of *.so). A plugin that cannot be loaded is reported and skipped.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "fusion/fusion_rule.h"
#include "passes/pass.h"

namespace kiln {

class PassManager;

struct LoadedPlugin {
  std::string path, name;
  std::vector<std::pair<Stage, std::function<std::unique_ptr<Pass>()>>> passes;
  FusionRuleList fusionRules;
  int ops = 0;
};

struct PluginSet {
  std::vector<LoadedPlugin> plugins;
  std::vector<std::string> errors;  // one line each: "plugin PATH: reason"
  // Appends every plugin pass to `pm` at the end of its stage (call after addStandardPasses).
  void addPassesTo(PassManager& pm) const;
  // Every plugin's fusion rules, for addStandardPasses (GraphFusion tries them after the built-in rules).
  FusionRuleList fusionRules() const;
};

// `explicitPaths` from --plugin; KILN_PLUGIN_PATH is read from the environment when `useEnvironment`.
PluginSet loadPlugins(const std::vector<std::string>& explicitPaths, bool useEnvironment = true);

}  // namespace kiln
