// kiln history list DB [--json]
// kiln history show DB RUN [--pass N] [--diff] [--json]
//   show: the run and its passes; --pass N: the graph after pass N; --pass N --diff: what pass N changed.
// kiln history diff DB RUN A B [--json]: any two passes compared.
// kiln history import DB PATH... [--fusion-result FILE] [--json]: GE graph dumps (folders or files: ge_proto_*.txt,
//   ge_onnx_*.pbtxt) become one run per compilation they record, with ATC's fusion_result.json attached.
// kiln history import DB PROFILE [--run N] [--json]: a run measured by msprof (a profile folder or its op_summary
//   CSV) beside run N, its tasks matched to the run's nodes, or as a run of its own (history/measured_import.h).
// kiln history compare DB RUN_A RUN_B [--json]: the two runs' numbers side by side, as the workbench's Compare Runs
//   lists them (a GE run imported from dumps or an .om beside Kiln's compile of the same network included).
// kiln history merge OUT.db IN.db... [--json]: every run of the inputs copied into OUT (new run ids), e.g. the
//   histories of a CI matrix's `kiln batch --shard` jobs.
// kiln history upgrade DB [--json]: migrates a history written by an older Kiln to this one's schema (viewing
//   commands refuse such a file until then; the workbench and any recording command upgrade it as they open it).
// Read-only except import and merge, which only add runs, and upgrade.
#include <iostream>

#include "cli/args.h"
#include "cli/commands.h"
#include "history/history_db.h"
#include "history/history_merge.h"
#include "history/history_reader.h"
#include "history/history_report.h"
#include "history/ge_dump_import.h"
#include "history/measured_import.h"
#include "io/msprof/msprof_profile.h"
#include "report/run_charts.h"
#include "report/run_comparison.h"

namespace kiln::cli {
namespace {

int64_t parseId(const std::string& s, const char* what) {
  try {
    size_t used = 0;
    const long long v = std::stoll(s, &used);
    if (used == s.size() && v >= 0) return v;
  } catch (const std::exception&) {
  }
  throw UsageError(std::string(what) + " must be a non-negative integer, got '" + s + "'");
}

constexpr const char* kUsage =
    "usage: kiln history list DB [--json]\n"
    "       kiln history show DB RUN [--pass N] [--diff] [--json]\n"
    "       kiln history diff DB RUN A B [--json]\n"
    "       kiln history compare DB RUN_A RUN_B [--json]\n"
    "       kiln history import DB DUMPS... [--fusion-result FILE] [--json]\n"
    "       kiln history import DB PROFILE [--run N] [--json]\n"
    "       kiln history merge OUT.db IN.db... [--json]\n"
    "       kiln history upgrade DB [--json]";

// kiln history import DB PROFILE [--run N]: the counts of each kind of match say how far the profile and the run
// agree.
int importProfile(const Args& args) {
  const msprof::MeasuredProfile profile = msprof::readMeasuredProfile(args.positional[1]);
  std::optional<int64_t> run;
  if (const auto r = args.value("--run")) run = parseId(*r, "--run");
  HistoryDb db(args.positional[0]);
  const MeasuredImportResult r = importMeasuredProfile(db, profile, run);
  auto notes = [&] {
    std::cout.flush();
    for (const std::string& n : profile.notes) std::cerr << "kiln history import: " << n << "\n";
    for (const std::string& n : r.notes) std::cerr << "kiln history import: " << n << "\n";
  };
  if (args.has("--json")) {
    Json j = Json::object();
    j.set("run", r.runId);
    j.set("new_run", r.newRun);
    j.set("tasks", r.tasks);
    j.set("matched_by_name", r.byName);
    j.set("matched_by_original_name", r.byOriginalName);
    j.set("matched_by_type_and_shape", r.byTypeAndShape);
    j.set("unmatched", r.unmatched);
    j.set("static_memory_rows", r.staticMemoryRows);
    j.set("skipped_rows", static_cast<int64_t>(profile.skippedRows));
    std::cout << j.dump(2) << "\n";
    notes();
    return 0;
  }
  std::cout << "imported " << r.tasks << " measured tasks from " << profile.tasksFile << " "
            << (r.newRun ? "as run " : "beside run ") << r.runId << " in " << args.positional[0] << "\n"
            << "  matched to nodes: " << r.byName << " by name, " << r.byOriginalName << " by an original name, "
            << r.byTypeAndShape << " by type and shape; " << r.unmatched << " unmatched\n";
  if (r.staticMemoryRows) std::cout << "  static memory: " << r.staticMemoryRows << " ops\n";
  notes();
  return 0;
}

}  // namespace

int runHistory(const Argv& argv) {
  if (argv.empty()) throw UsageError(kUsage);
  const std::string sub = argv[0];
  const Args args =
      parseArgs(Argv(argv.begin() + 1, argv.end()), {{"--json", "--diff"}, {"--pass", "--fusion-result", "--run"}});
  const bool json = args.has("--json");
  if (args.positional.empty()) throw UsageError(kUsage);
  if (sub == "import" && args.positional.size() == 2 && msprof::isMeasuredProfile(args.positional[1]))
    return importProfile(args);
  if (sub == "import") {
    if (args.has("--run")) throw UsageError("--run is for a measured profile (GE dumps import as runs of their own)");
    if (args.positional.size() < 2) throw UsageError(kUsage);
    const std::vector<std::string> paths(args.positional.begin() + 1, args.positional.end());
    HistoryDb db(args.positional[0]);  // LoadError (exit 2) for a foreign or newer database: never touched
    const gedump::ImportResult r = gedump::importDumps(paths, db, args.value("--fusion-result").value_or(""));
    for (const std::string& w : r.warnings) std::cerr << "kiln history import: warning: " << w << "\n";
    if (json) {
      Json runs = Json::array();
      for (const gedump::ImportedRun& run : r.runs) {
        Json j = Json::object();
        j.set("run", run.runId);
        j.set("graph", run.label);
        j.set("stages", int64_t(run.stages));
        j.set("last_file", run.lastFile);
        j.set("fusion_passes", int64_t(run.fusionPasses));
        runs.push(std::move(j));
      }
      Json j = Json::object();
      j.set("runs", std::move(runs));
      std::cout << j.dump(2) << "\n";
    } else {
      for (const gedump::ImportedRun& run : r.runs)
        std::cout << "imported " << run.label << " as run " << run.runId << " (" << run.stages
                  << (run.stages == 1 ? " stage" : " stages")
                  << (run.fusionPasses ? ", " + std::to_string(run.fusionPasses) + " fusion passes from ATC's report" : "")
                  << ") in " << args.positional[0] << "\n";
    }
    return 0;
  }
  if (sub == "merge") {
    if (args.positional.size() < 2) throw UsageError(kUsage);
    const std::vector<std::string> inputs(args.positional.begin() + 1, args.positional.end());
    const HistoryMergeStats stats = mergeHistories(args.positional[0], inputs);
    if (json) {
      Json j = Json::object();
      j.set("runs", stats.runs);
      j.set("models", stats.models);
      std::cout << j.dump(2) << "\n";
    } else {
      std::cout << "merged " << stats.runs << " runs from " << inputs.size() << " files into " << args.positional[0]
                << "\n";
    }
    return 0;
  }
  if (sub == "upgrade") {
    if (args.positional.size() != 1) throw UsageError(kUsage);
    const std::string& path = args.positional[0];
    // A foreign, newer or missing file is refused (LoadError) untouched; an older one is migrated by the writable
    // open, in one transaction.
    const int from = HistoryDb::olderSchemaOf(path);
    const HistoryDb opened(path, from ? HistoryDb::Mode::ReadWrite : HistoryDb::Mode::ReadOnly);
    if (json) {
      Json j = Json::object();
      j.set("from_schema", int64_t(from ? from : HistoryDb::kSchemaVersion));
      j.set("schema", int64_t(HistoryDb::kSchemaVersion));
      std::cout << j.dump(2) << "\n";
    } else if (from) {
      std::cout << "upgraded " << path << " from schema " << from << " to " << HistoryDb::kSchemaVersion << "\n";
    } else {
      std::cout << path << " is at schema " << HistoryDb::kSchemaVersion << " already\n";
    }
    return 0;
  }
  if (sub == "compare") {
    if (args.positional.size() != 3) throw UsageError(kUsage);
    const std::string& path = args.positional[0];
    const int64_t a = parseId(args.positional[1], "RUN_A"), b = parseId(args.positional[2], "RUN_B");
    {
      HistoryDb probe(path, HistoryDb::Mode::ReadOnly);  // refuses a foreign file before any run is read
      HistoryReader r(probe);
      try {
        r.run(a);
        r.run(b);
      } catch (const HistoryError& e) {
        throw UsageError(e.what());
      }
    }
    const RunCharts ca = loadRunCharts(path, a, nullptr), cb = loadRunCharts(path, b, nullptr);
    for (const auto& [id, c] : {std::pair<int64_t, const RunCharts*>{a, &ca}, {b, &cb}})
      if (!c->hasMetrics)
        throw std::runtime_error("run " + std::to_string(id) + " has no numbers to compare: " + c->memoryMessage);
    auto label = [](int64_t id, const RunMetrics& m) {
      return "run " + std::to_string(id) + ": " + m.model + (m.optionSet.empty() ? "" : " (" + m.optionSet + ")") +
             (m.compile.byGe ? ", compiled by GE" : "");
    };
    const auto rows = compareRunMetrics(ca.metrics, cb.metrics);
    const std::string la = label(a, ca.metrics), lb = label(b, cb.metrics);
    std::cout << (json ? comparisonJson(rows, la, lb).dump(2) + "\n" : comparisonText(rows, la, lb));
    return 0;
  }
  HistoryDb db(args.positional[0], HistoryDb::Mode::ReadOnly);
  HistoryReader reader(db);
  try {
    if (sub == "list") {
      if (args.positional.size() != 1) throw UsageError(kUsage);
      const auto runs = reader.listRuns();
      std::cout << (json ? runsToJson(runs).dump(2) + "\n" : formatRuns(runs));
      return 0;
    }
    if (sub == "show") {
      if (args.positional.size() != 2) throw UsageError(kUsage);
      const int64_t run = parseId(args.positional[1], "RUN");
      if (auto pass = args.value("--pass")) {
        const int k = static_cast<int>(parseId(*pass, "--pass"));
        if (args.has("--diff")) {
          const GraphDiff d = reader.diff(run, k);
          std::cout << (json ? diffToJson(d).dump(2) + "\n" : formatDiff(d));
        } else {
          const GraphSnapshot g = reader.graphAt(run, k);
          std::cout << (json ? snapshotToJson(g).dump(2) + "\n" : formatSnapshot(g));
        }
        return 0;
      }
      if (args.has("--diff")) throw UsageError("--diff needs --pass N");
      const RunInfo info = reader.run(run);
      const auto passes = reader.passes(run);
      std::cout << (json ? runDetailsToJson(info, passes).dump(2) + "\n" : formatRunDetails(info, passes));
      return 0;
    }
    if (sub == "diff") {
      if (args.positional.size() != 4) throw UsageError(kUsage);
      const GraphDiff d = reader.diff(parseId(args.positional[1], "RUN"), static_cast<int>(parseId(args.positional[2], "A")),
                                      static_cast<int>(parseId(args.positional[3], "B")));
      std::cout << (json ? diffToJson(d).dump(2) + "\n" : formatDiff(d));
      return 0;
    }
  } catch (const HistoryError& e) {
    throw UsageError(e.what());  // unknown run or pass: a bad argument
  }
  throw UsageError(kUsage);
}

}  // namespace kiln::cli
