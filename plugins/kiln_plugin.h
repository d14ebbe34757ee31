#pragma once
// Kiln's plugin API. A plugin is a shared library that Kiln loads only from paths the user names (`--plugin PATH`
// or the KILN_PLUGIN_PATH list of files and folders). It must export two C functions:
//
//   extern "C" int  kiln_plugin_api_version();                         // return KILN_PLUGIN_API_VERSION
//   extern "C" void kiln_plugin_register(kiln::plugin::Registry& r);   // add passes, ops and fusion rules
//
// A plugin built against another API version, or missing either function, is refused with a message and Kiln
// carries on without it. Plugins use the engine's public headers (ir/, passes/) and resolve the engine's symbols
// from the kiln executable at load time (build them as MODULE libraries that do not link the engine).
//
// Version history: 1 — passes (any stage) and op definitions. 2 — fusion rules (addFusionRule, appended to the
// registry so version-1 plugins keep working).
#include <functional>
#include <memory>
#include <string>

#include "fusion/fusion_rule.h"
#include "ir/opdefs/op_registry.h"
#include "passes/pass.h"

#define KILN_PLUGIN_API_VERSION 2

namespace kiln::plugin {

class Registry {
 public:
  virtual ~Registry() = default;
  // The pass runs at the end of `stage`, after Kiln's own passes of that stage, in registration order.
  virtual void addPass(Stage stage, std::function<std::unique_ptr<Pass>()> factory) = 0;
  // Defines an op outside the standard ONNX domains (a standard ONNX op cannot be redefined).
  virtual void addOp(OpDef def) = 0;
  // The plugin's own name for messages ("example-plugin").
  virtual void setName(std::string name) = 0;
  // Version 2. The rule joins GraphFusion (optimize stage) after the built-in rules; fusion_switch turns it off
  // by its name like any other. Build the rewrite with fuseNodes (ir/fused_node.h).
  virtual void addFusionRule(std::shared_ptr<FusionRule> rule) = 0;
};

}  // namespace kiln::plugin
