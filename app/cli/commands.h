#pragma once
// Headless subcommands. Each takes the arguments after its name and returns the process exit code:
// 0 success, 1 a check failed (gates, verification), 2 bad input or bad arguments. None creates a QApplication.
#include <string>
#include <vector>

namespace kiln::cli {

using Argv = std::vector<std::string>;

int runInspect(const Argv& args);
int runSample(const Argv& args);
int runCompile(const Argv& args);
int runHistory(const Argv& args);
int runPlan(const Argv& args);
int runConformance(const Argv& args);
int runRun(const Argv& args);
int runVerify(const Argv& args);
int runBatch(const Argv& args);
int runCalibrate(const Argv& args);

}  // namespace kiln::cli
