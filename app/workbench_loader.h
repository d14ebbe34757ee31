#pragma once
// Starts the workbench (`kiln` or `kiln FILE`) from the kiln_workbench module, loaded only now: headless commands
// never load Qt. Returns the process exit code. Refuses (exit 2, with a hint at the headless commands) when there is
// no display, instead of letting Qt abort, and when the module is missing or cannot be loaded (naming it).
#include <string>

namespace kiln::app {

int runWorkbench(int argc, char** argv, const std::string& file);
bool displayAvailable();

// The module's entry point (app/gui/gui_main.cpp), looked up by this name.
inline constexpr const char* kWorkbenchEntry = "kiln_workbench_main";
using WorkbenchEntry = int (*)(int argc, char** argv, const char* file);

}  // namespace kiln::app
