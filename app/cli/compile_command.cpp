// kiln compile MODEL [--options F] [--set k=v]... [--history DB] [--until PASS|STAGE]
//              [--dump-dir D [--dump-format onnx|ge_proto]] [-o OUT.om] [--sweep SYMBOL=V1,... [--chart F]] [--json]
// Runs the compiler pipeline, printing a per-pass table and what it produced (fusions, TransData, streams, events,
// memory, tasks) (or all of it as JSON), optionally recording every pass in a history database, dumping the graph
// after each pass as ONNX, and writing the compiled model as an Ascend offline model (.om).
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/compile_variants.h"
#include "cli/emulation_args.h"
#include "cli/exit_soon.h"
#include "io/model_loader.h"
#include "io/om/om_writer.h"
#include "history/history_opening.h"
#include "history/history_recorder.h"
#include "passes/pass_manager.h"
#include "pipeline/standard_pipeline.h"
#include "plugin/plugin_loader.h"
#include "report/compile_summary.h"

namespace kiln::cli {

Options optionsFromArgs(const Args& args) {
  Options options;
  if (auto file = args.value("--options")) options = Options::fromFile(*file);
  if (auto it = args.values.find("--set"); it != args.values.end())
    for (const std::string& kv : it->second) {
      try {
        options.set(kv);
      } catch (const OptionError& e) {
        throw UsageError(e.what());
      }
    }
  return options;
}

int runCompile(const Argv& argv) {
  const Args args =
      parseArgs(argv, {{"--json"}, {"--options", "--set", "--history", "--until", "--dump-dir", "--dump-format", "--plugin",
                                    "-o", "--sweep", "--chart"}});
  if (args.positional.size() != 1)
    throw UsageError("usage: kiln compile MODEL [--options F] [--set k=v] [--history DB] [--until PASS|STAGE] "
                     "[--dump-dir D [--dump-format onnx|ge_proto]] [-o OUT.om] [--sweep SYMBOL=V1,V2,... [--chart F.svg]] "
                     "[--json]");
  if (args.value("-o") && args.value("--until"))
    throw UsageError("-o writes a fully compiled model; it cannot be combined with --until");
  const Options options = optionsFromArgs(args);
  if (args.value("--chart") && !args.value("--sweep")) throw UsageError("--chart draws a --sweep: give one");
  try {
    if (wantsVariants(args, options)) return runCompileVariants(args, options);
  } catch (const OptionError& e) {
    throw UsageError(e.what());
  }
  std::optional<HistoryOpening> history;
  if (auto path = args.value("--history")) history.emplace(*path);
  LoadedModel loaded = loadModel(args.positional[0], loadLimits(options, true));
  Model& model = *loaded.model;
  checkedBinding(args.positional[0], model, options);  // a binding the model contradicts: exit 2, nothing run

  const PluginSet plugins = loadPlugins(args.values.count("--plugin") ? args.values.at("--plugin")
                                                                      : std::vector<std::string>{});
  for (const auto& e : plugins.errors) std::cerr << "kiln: warning: " << e << "\n";
  PassManager pm;
  addStandardPasses(pm, options, plugins.fusionRules());
  plugins.addPassesTo(pm);
  if (auto until = args.value("--until")) pm.setUntil(*until);
  std::ostringstream table;
  TimingTableObserver timing(table);
  const bool json = args.has("--json");
  if (!json) pm.addObserver(&timing);
  std::unique_ptr<HistoryDb> db;
  std::unique_ptr<HistoryRecorder> recorder;
  if (history) {
    db = history->take();  // LoadError (exit 2) for a foreign or newer database: never touched
    recorder = std::make_unique<HistoryRecorder>(*db, args.positional[0]);
    pm.addObserver(recorder.get());
  }
  std::unique_ptr<DumpObserver> dump;
  const std::string dumpFormat = args.value("--dump-format").value_or("onnx");
  if (dumpFormat != "onnx" && dumpFormat != "ge_proto")
    throw UsageError("--dump-format is onnx or ge_proto, not '" + dumpFormat + "'");
  if (auto dir = args.value("--dump-dir")) {
    dump = std::make_unique<DumpObserver>(*dir, dumpFormat == "onnx" ? DumpFormat::Onnx : DumpFormat::GeProto);
    pm.addObserver(dump.get());
  }
  RunSummary s;
  try {
    s = pm.run(model, options);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }

  if (json) {
    Json j = Json::object();
    j.set("run", recorder ? Json(recorder->runId()) : Json());
    Json summary = runSummaryToJson(s);  // named: a temporary would die before the loop body runs
    for (auto& [k, v] : summary.asObject()) j.set(k, std::move(v));
    Json compiled = compileSummaryToJson(summarizeCompile(model, s));
    for (auto& [k, v] : compiled.asObject()) j.set(k, std::move(v));
    j.set("shape_binding", model.binding.toJson());
    std::cout << j.dump(2) << "\n";
  } else {
    if (!model.binding.empty()) std::cout << "shapes    " << model.binding.text() << "\n";
    std::cout << table.str();
    std::cout << compileSummaryLine(summarizeCompile(model, s)) << "\n";
    for (const auto& w : s.warnings) std::cout << "warning: " << w << "\n";
    if (recorder && recorder->error().empty())
      std::cout << "recorded as run " << recorder->runId() << " in " << *args.value("--history") << "\n";
    else if (recorder)  // the error follows on stderr; the passes committed before it stay readable
      std::cout << "run " << recorder->runId() << " in " << *args.value("--history") << ": recording stopped early\n";
  }
  if (recorder && !recorder->error().empty()) {
    std::cerr << "kiln compile: history " << *args.value("--history") << ": " << recorder->error() << "\n";
    return 1;
  }
  if (s.status == RunStatus::Failed) {
    std::cerr << "kiln compile: " << args.positional[0] << ": pass " << s.error << "\n";
    return s.invalidModel ? 2 : 1;  // an invalid model is bad input
  }
  if (auto out = args.value("-o")) {
    try {
      om::writeOmFile(model, options, *out);
    } catch (const std::exception& e) {
      std::cerr << "kiln compile: cannot write " << *out << ": " << e.what() << "\n";
      return 2;
    }
    if (!json) std::cout << "wrote " << *out << "\n";
  }
  if (recorder) recorder->close();
  freedByExit(std::move(recorder));
  freedByExit(std::move(loaded.model));
  return 0;
}

}  // namespace kiln::cli
