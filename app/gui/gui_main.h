#pragma once
// Starts the workbench: `kiln` or `kiln FILE`. Returns the process exit code. Refuses (exit 2, with a hint at the
// headless commands) when there is no display, instead of letting Qt abort.
#include <string>

namespace kiln::app {

int runWorkbench(int argc, char** argv, const std::string& file);
bool displayAvailable();

}  // namespace kiln::app
