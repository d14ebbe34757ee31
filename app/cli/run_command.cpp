// kiln run MODEL [--options F] [--set k=v]... [--inputs DIR|FILE.npz | --random SEED] [--dim SYMBOL=N]... [--expected F.pb]...
//          [--soc NAME|FILE] [--trace OUT.json] [--history DB] [--json]
// Emulates a model both ways — the original graph on the reference kernels, the compiled graph inside one arena laid
// out by its memory plan — on the same inputs and prints each output's error (max abs, max rel, cosine). Expected
// outputs (ONNX .pb files; by default <model>_output_<i>.pb beside the model, as the light_* models ship, and the
// arrays of an input .npz named after graph outputs; <model>_io.npz beside the model is the default input) are
// compared with the reference. Every output is judged by the precision gate of what the compile computes in
// (emulator/precision_gate.h: cosine >= verify.min_cosine and the error within verify.rtol_fp32/_fp16/_bf16); exit 1
// when an output falls below it or an expected output does not match.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/emulation_args.h"
#include "emulator/emulation.h"
#include "emulator/precision_gate.h"
#include "emulator/model_inputs.h"
#include "emulator/timing/model_soc.h"
#include "emulator/timing/timeline_sim.h"
#include "io/model_loader.h"
#include "io/tensor_file.h"
#include "history/history_emulation.h"
#include "history/history_recorder.h"
#include "passes/pass_manager.h"
#include "pipeline/standard_pipeline.h"
#include "report/chrome_trace.h"
#include "util/json.h"
#include "util/units.h"

namespace kiln::cli {

Options optionsFromArgs(const Args& args);  // compile_command.cpp

namespace {

std::string sci(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

Json differenceJson(const std::string& name, const TensorDifference& d) {
  Json j = Json::object();
  j.set("name", name);
  j.set("comparable", d.comparable);
  j.set("max_abs", d.comparable ? Json(d.maxAbs) : Json());
  j.set("max_rel", d.comparable ? Json(d.maxRel) : Json());
  j.set("cosine", d.cosine);
  j.set("mismatches", d.mismatches);
  if (!d.firstMismatch.empty()) j.set("first_mismatch", d.firstMismatch);
  return j;
}

std::string differenceLine(const TensorDifference& d) {
  if (!d.comparable) return d.firstMismatch;
  return "max abs " + sci(d.maxAbs) + ", max rel " + sci(d.maxRel) + ", cosine " + std::to_string(d.cosine);
}

// Expected outputs: the files given, else <stem>_output_<i>.pb beside the model for as many i as exist.
std::vector<std::string> expectedFiles(const Args& args, const std::string& model) {
  if (auto it = args.values.find("--expected"); it != args.values.end()) return it->second;
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  const fs::path p(model);
  for (int i = 0;; ++i) {
    const fs::path f = p.parent_path() / (p.stem().string() + "_output_" + std::to_string(i) + ".pb");
    std::error_code ec;
    if (!fs::exists(f, ec)) break;
    files.push_back(f.string());
  }
  return files;
}

// The critical path's kernels by time: the few that dominate it.
std::string criticalSummary(const Timeline& tl) {
  std::vector<const TimelineEntry*> kernels;
  double total = 0;
  for (int t : tl.criticalPath) {
    const TimelineEntry& e = tl.entries[size_t(t)];
    total += e.endUs - e.startUs;
    if (e.node) kernels.push_back(&e);
  }
  std::sort(kernels.begin(), kernels.end(),
            [](auto* a, auto* b) { return a->endUs - a->startUs > b->endUs - b->startUs; });
  std::string s = std::to_string(tl.criticalPath.size()) + " tasks, " + formatDuration(total / 1e6) + " busy; longest:";
  for (size_t i = 0; i < kernels.size() && i < 3; ++i)
    s += std::string(i ? "," : "") + " " +
         (kernels[i]->node->name().empty() ? "#" + std::to_string(kernels[i]->node->id()) : kernels[i]->node->name()) +
         " (" + kernels[i]->node->opType() + ", " +
         formatDuration((kernels[i]->endUs - kernels[i]->startUs) / 1e6) + ", " +
         (kernels[i]->memoryBound ? "memory" : "compute") + "-bound)";
  return s;
}

}  // namespace

int runRun(const Argv& argv) {
  const Args args = parseArgs(
      argv, {{"--json"}, {"--options", "--set", "--inputs", "--random", "--dim", "--expected", "--soc", "--trace",
                          "--history"}});
  if (args.positional.size() != 1 || (args.value("--inputs") && args.value("--random")))
    throw UsageError("usage: kiln run MODEL [--options F] [--set k=v] [--inputs DIR|FILE.npz | --random SEED] "
                     "[--dim SYMBOL=N] [--expected OUT.pb]... [--soc NAME|FILE.json] [--trace OUT.json] [--history DB] [--json]");
  const std::string path = args.positional[0];
  Options options = optionsFromArgs(args);
  runDimBindings(options, dimBindings(args));
  LoadedModel original = loadModel(path, loadLimits(options, true));
  LoadedModel compiled = loadModel(path, loadLimits(options, true));
  // The inputs first: given data fixes the symbolic dims it fills.
  EmulationInputs inputs;
  std::string notEmulatable;  // why the functional run cannot happen; the timing is reported anyway
  try {
    inputs = emulationInputs(args, path, *original.model, options);
  } catch (const LoadError&) {
    throw;
  } catch (const UsageError&) {
    throw;
  } catch (const std::runtime_error& e) {
    notEmulatable = std::string("no input data: ") + e.what();
  }
  // The compiler's binding (the data's extents, --dim and dim_values, then dim_policy): the emulator, the memory plan
  // and the timing see one set of shapes.
  const ShapeBinding binding = emulationBinding(path, *original.model, options);
  PassManager pm;
  addStandardPasses(pm, options, {});
  std::unique_ptr<HistoryDb> db;
  std::unique_ptr<HistoryRecorder> recorder;
  if (auto h = args.value("--history")) {
    db = HistoryDb::forAppending(*h);  // LoadError (exit 2) for a foreign or newer file, which stays untouched
    recorder = std::make_unique<HistoryRecorder>(*db, path);
    pm.addObserver(recorder.get());
  }
  RunSummary s;
  try {
    s = pm.run(*compiled.model, options);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  if (s.status == RunStatus::Failed) {
    std::cerr << "kiln run: " << path << ": compile failed: pass " << s.error << "\n";
    return 1;
  }
  // Timing first: it needs only the compiled task list, so it is reported even for a model whose ops cannot all be
  // computed.
  SocProfile soc;
  try {
    soc = SocProfile::load(args.value("--soc").value_or(socVersionFor(*compiled.model, options)));
  } catch (const std::exception& e) {
    throw UsageError(e.what());
  }
  const std::vector<Task> tasks = buildTaskList(*compiled.model->graph, soc.aiCores);
  const Timeline timeline = simulateTimeline(tasks, soc, options.getBool("model_sink"));
  if (auto trace = args.value("--trace"))
    writeChromeTrace(timelineChartFromSimulation(timeline, soc), std::filesystem::path(path).filename().string(), *trace);
  std::string historyError = recorder ? recorder->error() : std::string();
  if (recorder && recorder->runId() > 0 && historyError.empty()) {
    // The timeline joins the run's passes, so the workbench can show it beside the graph it came from.
    try {
      writeTimeline(*db, recorder->runId(), timelineRows(timeline));
    } catch (const std::exception& e) {
      historyError = e.what();
    }
  }
  if (!historyError.empty()) std::cerr << "kiln run: history: " << historyError << "\n";

  EmulationReport report;
  // An .om carries GE's compiled graph and kernels, not an original to compare with: its run is the timing alone.
  const bool timingOnly = compiled.model->precompiled;
  if (timingOnly) notEmulatable = "not run: an .om holds GE's compiled kernels, which the emulator does not execute";
  try {
    if (notEmulatable.empty())
      report = emulateModel(*original.model, *compiled.model, inputs.tensors, withLimits({}, options));
  } catch (const NotEmulatable& e) {
    notEmulatable = e.what();
  } catch (const std::runtime_error& e) {
    // A kernel refused the bound shapes (a pool wider than the bound image, a table shorter than the sequence):
    // say which extents the run used and how to change them.
    const std::string hint = binding.hint();
    throw std::runtime_error(path + ": " + e.what() + (hint.empty() ? "" : "; " + hint));
  }
  // Expected outputs, against the reference (the yardstick) and the compiled result.
  std::vector<OutputError> expected;
  for (const std::string& file : notEmulatable.empty() ? expectedFiles(args, path) : std::vector<std::string>{}) {
    const size_t i = expected.size();
    if (i >= report.reference.size()) throw LoadError(file, "more expected outputs than the model has outputs");
    const Tensor want = readTensorFile(file).tensor;
    expected.push_back({file, compareTensors(report.reference[i], want)});
  }
  // An input archive's arrays named after a graph output, or after the node producing it (tract's io.npz names
  // arrays by node), are expected outputs too.
  const Graph& og = *original.model->graph;
  for (size_t i = 0; notEmulatable.empty() && i < og.outputs().size() && i < report.reference.size(); ++i)
    for (const auto& [name, want] : inputs.archive)
      if (const Value* o = og.outputs()[i];
          name == o->name() || (o->producer() && !o->producer()->name().empty() && name == o->producer()->name()))
        expected.push_back({inputs.archivePath + ":" + name, compareTensors(report.reference[i], want)});
  const std::string precision = options.getString("precision_mode");
  const PrecisionGate gate = precisionGate(options, *compiled.model->graph);
  const std::vector<OutputVerdict> verdicts = judgeOutputs(report, gate);
  const std::string numericsFailure = firstFailure(verdicts);
  bool failed = (!notEmulatable.empty() && !timingOnly) || !report.compiledError.empty() || !numericsFailure.empty();
  for (const OutputError& e : expected) failed = failed || !e.diff.within();

  if (args.has("--json")) {
    Json j = Json::object();
    j.set("model", path);
    j.set("inputs", inputs.description);
    j.set("precision_mode", precision);
    j.set("reference_ms", report.referenceMs);
    j.set("compiled_ms", report.compiledMs);
    j.set("arena_bytes", report.arena.arenaBytes);
    j.set("placed_tensors", report.arena.placedTensors);
    j.set("aside_tensors", report.arena.asideTensors);
    j.set("max_abs_error", report.maxAbsError());
    j.set("max_rel_error", report.maxRelError());
    j.set("min_cosine", report.minCosine());
    Json outs = Json::array();
    for (size_t i = 0; i < report.errors.size(); ++i) {
      Json o = differenceJson(report.errors[i].name, report.errors[i].diff);
      if (i < verdicts.size()) {
        o.set("passed", verdicts[i].passed);
        o.set("reason", verdicts[i].reason);
      }
      outs.push(std::move(o));
    }
    j.set("outputs", std::move(outs));
    j.set("gate", gate.describe());
    j.set("compute_precision", computePrecisionName(gate.precision));
    if (!numericsFailure.empty()) j.set("numerics_failure", numericsFailure);
    Json exp = Json::array();
    for (const OutputError& e : expected) exp.push(differenceJson(e.name, e.diff));
    j.set("expected", std::move(exp));
    j.set("passed", !failed);
    j.set("numerics", report.compiledNotEmulatable || !notEmulatable.empty() ? "missing"
                      : !numericsFailure.empty() || !report.compiledError.empty() ? "failed"
                      : verdicts.empty()                                          ? "missing"
                                                                                  : "passed");
    if (!report.compiledError.empty()) j.set("compiled_error", report.compiledError);
    if (!notEmulatable.empty()) j.set("not_emulatable", notEmulatable);
    j.set("soc", soc.name);
    if (recorder) j.set("run", recorder->runId());
    j.set("bound_dims", binding.shortText());
    j.set("shape_binding", binding.toJson());
    j.set("model_sink", options.getBool("model_sink"));
    j.set("latency_us", timeline.latencyUs);
    j.set("tasks", static_cast<int64_t>(tasks.size()));
    j.set("host_launches", timeline.hostLaunches);
    Json util = Json::object();
    for (const UnitUtilisation& u : timeline.units) util.set(std::string(simUnitName(u.unit)), u.utilisation);
    j.set("utilisation", std::move(util));
    Json critical = Json::array();
    for (int t : timeline.criticalPath)
      if (const TimelineEntry& e = timeline.entries[size_t(t)]; e.node && e.type == TaskType::Kernel) critical.push(e.node->name());
    j.set("critical_path", std::move(critical));
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << "model       " << path << "\n";
    if (!binding.empty()) std::cout << "shapes      " << binding.text() << " (change with --dim SYMBOL=N)\n";
    if (notEmulatable.empty())
      std::cout << "inputs      " << inputs.description << "\n"
                << "reference   " << formatDuration(report.referenceMs / 1000.0)
                << " (original graph, every tensor its own buffer)\n";
    if (notEmulatable.empty() && report.compiledError.empty())
      std::cout << "compiled    " << formatDuration(report.compiledMs / 1000.0) << " (" << precision << ", "
                << report.arena.placedTensors << " tensors in one " << formatBytes(double(report.arena.arenaBytes))
                << " arena"
                << (report.arena.asideTensors
                        ? ", " + std::to_string(report.arena.asideTensors) + " unsized kept aside"
                        : "")
                << ")\n";
    if (!report.compiledError.empty()) std::cout << "compiled    could not run: " << report.compiledError << "\n";
    if (!verdicts.empty()) std::cout << "gate        " << gate.describe() << "\n";
    for (size_t i = 0; i < report.errors.size(); ++i) {
      const OutputError& e = report.errors[i];
      std::cout << "output      " << e.name << ": compiled vs reference: " << differenceLine(e.diff);
      if (i < verdicts.size())
        std::cout << "\n            " << (verdicts[i].passed ? "passed: " : "FAILED: ") << verdicts[i].reason;
      std::cout << "\n";
    }
    for (const OutputError& e : expected)
      std::cout << "expected    " << e.name << ": " << (e.diff.within() ? "match" : "MISMATCH") << " ("
                << (e.diff.within() ? differenceLine(e.diff) : e.diff.firstMismatch) << ")\n";
    std::cout << "latency     " << formatDuration(timeline.latencyUs / 1e6) << " simulated on " << soc.name << " ("
              << tasks.size() << " tasks, "
              << (options.getBool("model_sink") ? std::string("sunk: no host launches")
                                                : std::to_string(timeline.hostLaunches) + " host launches") << ")\n";
    std::cout << "utilisation";
    for (const UnitUtilisation& u : timeline.units)
      if (u.busyUs > 0) std::cout << " " << simUnitName(u.unit) << " " << sci(100 * u.utilisation) << "%";
    std::cout << "\n";
    std::cout << "critical    " << criticalSummary(timeline) << "\n";
    if (!notEmulatable.empty()) std::cout << "functional  " << notEmulatable << "\n";
    if (notEmulatable.empty() && report.compiledError.empty() && verdicts.empty() && !timingOnly)
      std::cout << "numerics    not measured: the compiled run produced no outputs\n";
    // The compiled graph holds an op its mode cannot run: nothing was measured, which is not a pass.
    std::cout << (report.compiledNotEmulatable && numericsFailure.empty() ? "NOT VERIFIED (numerics missing)"
                  : failed                                             ? "FAILED"
                                                                       : "ok")
              << "\n";
  }
  if (!historyError.empty()) return 1;
  return failed ? 1 : 0;
}

}  // namespace kiln::cli
