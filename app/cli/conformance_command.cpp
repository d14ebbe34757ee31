// kiln conformance DIR... [--filter TEXT] [--verbose] [--json]: runs ONNX backend test folders (model.onnx +
// test_data_set_*) on the emulator's reference executor and reports pass/fail per test with the reason.
#include <cstdio>
#include <iostream>
#include <map>

#include "cli/args.h"
#include "cli/commands.h"
#include "emulator/conformance.h"
#include "util/json.h"

namespace kiln::cli {

namespace {

struct Tally {
  int passed = 0, failed = 0, skipped = 0;
  void add(ConformanceStatus s) { ++(s == ConformanceStatus::Passed ? passed : s == ConformanceStatus::Failed ? failed : skipped); }
  std::string line() const {
    const int run = passed + failed;
    char rate[32];
    std::snprintf(rate, sizeof rate, "%.1f%%", run ? 100.0 * passed / run : 0.0);
    return std::to_string(passed) + " passed, " + std::to_string(failed) + " failed, " + std::to_string(skipped) +
           " skipped (" + rate + " of those run)";
  }
};

}  // namespace

int runConformance(const Argv& argv) {
  const Args args = parseArgs(argv, {{"--json", "--verbose"}, {"--filter"}});
  if (args.positional.empty())
    throw UsageError("usage: kiln conformance DIR... [--filter TEXT] [--verbose] [--json]\n"
                     "  DIR: one ONNX backend test folder (model.onnx + test_data_set_*) or a folder of them, e.g.\n"
                     "  /usr/share/libonnx-testdata/data/node");
  const std::string filter = args.value("--filter").value_or("");
  std::vector<std::string> dirs;
  for (const std::string& root : args.positional) {
    std::vector<std::string> found;
    try {
      found = findConformanceTests(root);
    } catch (const std::exception& e) {
      std::cerr << "kiln conformance: " << e.what() << "\n";
      return 2;
    }
    if (found.empty()) {
      std::cerr << "kiln conformance: " << root << ": no test folders (model.onnx + test_data_set_*) found\n";
      return 2;
    }
    for (std::string& d : found)
      if (filter.empty() || d.find(filter) != std::string::npos) dirs.push_back(std::move(d));
  }
  const bool json = args.has("--json");
  Tally total;
  std::map<std::string, Tally> bySuite;
  Json tests = Json::array();
  for (const std::string& dir : dirs) {
    const ConformanceResult r = runConformanceTest(dir);
    total.add(r.status);
    bySuite[r.suite].add(r.status);
    if (json) {
      Json t = Json::object();
      t.set("name", r.name);
      t.set("suite", r.suite);
      t.set("status", conformanceStatusName(r.status));
      t.set("reason", r.reason);
      t.set("ms", r.ms);
      tests.push(std::move(t));
    } else if (r.status != ConformanceStatus::Passed || args.has("--verbose")) {
      const char* tag = r.status == ConformanceStatus::Passed ? "PASS" : r.status == ConformanceStatus::Failed ? "FAIL" : "SKIP";
      std::cout << tag << "  " << r.suite << "/" << r.name << (r.reason.empty() ? "" : ": " + r.reason) << "\n";
    }
  }
  if (json) {
    Json j = Json::object();
    j.set("passed", total.passed);
    j.set("failed", total.failed);
    j.set("skipped", total.skipped);
    j.set("tests", std::move(tests));
    std::cout << j.dump(2) << "\n";
  } else {
    for (const auto& [suite, tally] : bySuite) std::cout << suite << ": " << tally.line() << "\n";
    if (bySuite.size() > 1) std::cout << "total: " << total.line() << "\n";
  }
  return total.failed > 0 ? 1 : 0;
}

}  // namespace kiln::cli
