// kiln batch --models DIR|FILE... --options A.json [--options B.json]... --out DIR [--history DB] [--jobs N]
//            [--baseline OLD/summary.json] [--fail-on EXPR]... [--shard I/N] [--timing-only] [--sweep SYMBOL=V1,...] [--overlay METRIC] [--quiet]
// kiln batch --merge-reports DIR... --out DIR
// Every model × option set compiled, simulated and emulated (engine/batch), one progress line per case on stderr,
// the reports in --out. Exit 1 when a case failed or a gate held, 2 for bad arguments or an unreadable
// baseline/option set, 0 otherwise. Never creates a QApplication.
#include <cstdio>
#include <iostream>

#include "batch/batch_run.h"
#include "batch/report_files.h"
#include "batch/report_merge.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "layout/node_overlay.h"
#include "util/units.h"

namespace kiln::cli {

namespace {

constexpr const char* kUsage =
    "usage: kiln batch --models DIR|FILE... --options A.json [--options B.json]... --out DIR [--history DB] "
    "[--jobs N] [--baseline OLD/summary.json] [--fail-on EXPR]... [--shard I/N] [--timing-only] [--sweep SYMBOL=V1,V2,...] [--overlay METRIC] [--quiet]\n"
    "       kiln batch --merge-reports DIR... --out DIR";

std::vector<std::string> valuesOf(const Args& args, const std::string& key) {
  auto it = args.values.find(key);
  return it == args.values.end() ? std::vector<std::string>{} : it->second;
}

// "[3/12] ok      resnet.onnx × default  1.2 s" or "... FAILED ... — reason".
void printProgress(const CaseRecord& c, size_t done, size_t total) {
  std::string line = "[" + std::to_string(done) + "/" + std::to_string(total) + "] " +
                     (c.passed() ? "ok     " : "FAILED ") + c.metrics.model + " × " + c.metrics.optionSet + "  " +
                     formatDuration(c.wallMs / 1e3);
  if (!c.passed()) line += " — " + c.failure();
  std::fprintf(stderr, "%s\n", line.c_str());
}

int finish(const BatchSummary& s, const std::string& out, bool quiet) {
  if (!quiet) {
    std::fprintf(stderr, "%zu cases, %d failed, %s (reports %s) → %s/index.html\n", s.cases.size(), s.failed(),
                 formatDuration(s.totalMs / 1e3).c_str(), formatDuration(s.reportMs / 1e3).c_str(), out.c_str());
    if (const int skipped = s.skippedGates())
      std::fprintf(stderr, "warning: %d gate evaluations skipped (no baseline case or an unmeasured number): see "
                           "summary.md\n", skipped);
  }
  return s.failed() ? 1 : 0;
}

int mergeCommand(const Args& args, const std::string& out) {
  std::vector<std::string> dirs = valuesOf(args, "--merge-reports");
  dirs.insert(dirs.end(), args.positional.begin(), args.positional.end());
  if (!args.values.count("--models") && !args.values.count("--options") && !args.values.count("--fail-on") &&
      !args.values.count("--baseline") && !args.values.count("--shard")) {
    BatchSummary s = mergeReports(dirs, out);
    writeBatchReports(s, out);
    return finish(s, out, args.has("--quiet"));
  }
  throw UsageError("--merge-reports joins finished reports: it takes only directories, --out and --quiet");
}

}  // namespace

int runBatch(const Argv& argv) {
  const Args args = parseArgs(argv, {{"--quiet", "--timing-only"},
                                     {"--models", "--options", "--out", "--history", "--jobs", "--baseline",
                                      "--fail-on", "--shard", "--merge-reports", "--sweep", "--overlay"}});
  const auto out = args.value("--out");
  if (!out) throw UsageError(std::string("--out DIR is required\n") + kUsage);
  if (args.values.count("--merge-reports")) return mergeCommand(args, *out);

  std::vector<std::string> modelArgs = valuesOf(args, "--models");
  modelArgs.insert(modelArgs.end(), args.positional.begin(), args.positional.end());
  if (modelArgs.empty()) throw UsageError(std::string("no models (--models DIR|FILE...)\n") + kUsage);
  const std::vector<std::string> optionFiles = valuesOf(args, "--options");
  if (optionFiles.empty()) throw UsageError(std::string("no option sets (--options FILE.json)\n") + kUsage);

  BatchSettings settings;
  settings.outDir = *out;
  settings.jobs = static_cast<int>(args.intValue("--jobs", 1, 64).value_or(1));
  settings.functional = !args.has("--timing-only");
  settings.historyPath = args.value("--history").value_or("");
  for (const std::string& expr : valuesOf(args, "--fail-on")) {
    try {
      settings.gates.push_back(GateExpr::parse(expr));
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }
  if (auto sweep = args.value("--sweep")) {
    try {
      settings.sweep = parseSweep(*sweep);
    } catch (const OptionError& e) {
      throw UsageError(e.what());
    }
  }
  if (auto overlay = args.value("--overlay")) {
    settings.overlay = layout::overlayMetricName(*overlay);
    if (settings.overlay.empty())
      throw UsageError("--overlay '" + *overlay + "': not a metric (" + layout::overlayMetricHelp() + ")");
  }
  BatchSummary baseline;
  if (auto b = args.value("--baseline")) {
    baseline = readBatchSummary(*b);  // LoadError: "kiln: FILE: problem", exit 2
    settings.baseline = &baseline;
  } else {
    for (const GateExpr& g : settings.gates)
      if (g.usesBaseline()) throw UsageError("--fail-on '" + g.text() + "' compares with a baseline: give --baseline OLD/summary.json");
  }
  // Option sets before models: a bad option file is a bad argument (exit 2); a bad model only fails its cases.
  const std::vector<OptionSet> sets = loadOptionSets(optionFiles);
  for (const OptionSet& s : sets) settings.optionSets.push_back(s.name);
  settings.cases = batchCases(findModels(modelArgs), sets);
  if (auto shard = args.value("--shard")) {
    try {
      const auto [index, count] = parseShard(*shard);
      settings.cases = shardCases(settings.cases, index, count);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    settings.shard = *shard;
  }
  const bool quiet = args.has("--quiet");
  if (!quiet) settings.progress = printProgress;
  const BatchSummary s = kiln::runBatch(settings);
  return finish(s, *out, quiet);
}

}  // namespace kiln::cli
