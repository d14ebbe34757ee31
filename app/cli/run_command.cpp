// kiln run MODEL [--options F] [--set k=v]... [--inputs DIR|FILE.npz | --random SEED] [--dim SYMBOL=N]... [--expected F.pb]...
//          [--soc NAME|FILE] [--trace OUT.json] [--history DB] [--reference SOURCE.onnx] [--repeat N] [--json]
// Emulates a model both ways — the original graph on the reference kernels, the compiled graph inside one arena laid
// out by its memory plan — on the same inputs and prints each output's error (max abs, max rel, cosine). Expected
// outputs (ONNX .pb files; by default <model>_output_<i>.pb beside the model, as the light_* models ship, and the
// arrays of an input .npz named after graph outputs; <model>_io.npz beside the model is the default input) are
// compared with the reference. Every output is judged by the precision gate of what the compile computes in
// (emulator/precision_gate.h: cosine >= verify.min_cosine and the error within verify.rtol_fp32/_fp16/_bf16); exit 1
// when an output falls below it or an expected output does not match.
// A graph GE compiled (an .om, or a GE file whose constants carry data) runs through its executable twin
// (emulator/ge_emulation.h): its own graph in fp32 is the reference, the graph as GE built it runs at GE's offsets;
// with --reference SOURCE.onnx the source model is the reference instead, and every op GE kept the names of is
// compared with the source's op it absorbed, naming the first outside the gate.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/emulation_args.h"
#include "emulator/emulation.h"
#include "emulator/ge_emulation.h"
#include "emulator/input_influence.h"
#include "emulator/reference_executor.h"
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

// Bytes of the graph's weights (its constant tensors, as loaded).
int64_t constantBytes(const Graph& g) {
  int64_t bytes = 0;
  for (const Value* v : g.values())
    if (v->constant()) bytes += static_cast<int64_t>(v->constant()->byteSize());
  return bytes;
}

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
         (kernels[i]->costUnknown ? "cost unknown" : kernels[i]->memoryBound ? "memory-bound" : "compute-bound") +
         ")";
  return s;
}

Json geRunJson(const GeEmulation& ge, const SourceComparison* source, const std::string& sourcePath) {
  Json j = Json::object();
  j.set("ran", ge.ran);
  Json issues = Json::array();
  for (const geops::LoweringIssue& i : ge.issues) {
    Json e = Json::object();
    e.set("op", i.op);
    e.set("type", i.type);
    e.set("why", i.why);
    issues.push(std::move(e));
  }
  j.set("not_run", std::move(issues));
  Json inferred = Json::array();
  for (const std::string& s : ge.inferred) inferred.push(s);
  j.set("inferred", std::move(inferred));
  if (source) {
    Json s = Json::object();
    s.set("file", sourcePath);
    s.set("inputs", source->inputMatching);
    Json nodes = Json::array();
    for (const NodeComparison& c : source->nodes) {
      Json n = differenceJson(c.geOp, c.verdict.diff);
      n.set("type", c.geType);
      n.set("source_node", c.sourceNode);
      n.set("passed", c.verdict.passed);
      n.set("reason", c.verdict.reason);
      nodes.push(std::move(n));
    }
    s.set("nodes", std::move(nodes));
    if (!source->firstDivergence.empty()) s.set("first_divergence", source->firstDivergence);
    Json notes = Json::array();
    for (const std::string& n : source->notes) notes.push(n);
    s.set("notes", std::move(notes));
    j.set("source", std::move(s));
  }
  return j;
}

void printGeRun(const GeEmulation& ge, const SourceComparison* source) {
  for (const std::string& s : ge.inferred) std::cout << "inferred    " << s << "\n";
  if (!source) return;
  std::cout << "inputs fed  " << source->inputMatching << "\n";
  for (const std::string& n : source->notes) std::cout << "note        " << n << "\n";
  size_t passed = 0;
  for (const NodeComparison& c : source->nodes) passed += c.verdict.passed;
  std::cout << "ops         " << source->nodes.size() << " matched to the source by the names GE kept, " << passed
            << " within the gate"
            << (source->firstDivergence.empty() ? std::string() : "; first outside: " + source->firstDivergence) << "\n";
}

// " best of N runs (first 1.2 ms)" after a time measured over --repeat N runs; nothing for one run.
std::string bestOf(int runs, double firstMs) {
  if (runs <= 1) return {};
  return " best of " + std::to_string(runs) + " runs (first " + formatDuration(firstMs / 1000.0) + ")";
}

}  // namespace

int runRun(const Argv& argv) {
  const Args args = parseArgs(
      argv, {{"--json"}, {"--options", "--set", "--inputs", "--random", "--value", "--dim", "--expected", "--soc", "--trace",
                          "--history", "--reference", "--repeat"}});
  if (args.positional.size() != 1 || (args.value("--inputs") && args.value("--random")))
    throw UsageError("usage: kiln run MODEL [--options F] [--set k=v] [--inputs DIR|FILE.npz | --random SEED] [--value NAME=V,...] "
                     "[--dim SYMBOL=N] [--expected OUT.pb]... [--soc NAME|FILE.json] [--trace OUT.json] [--history DB] "
                     "[--reference SOURCE.onnx] [--repeat N] [--json]");
  const std::string path = args.positional[0];
  // Runs of each mode to time: the results and memory are the first's, the time the fastest's (the first's beside).
  const int timedRuns = static_cast<int>(args.intValue("--repeat", 1, 1000).value_or(1));
  Options options = optionsFromArgs(args);
  runDimBindings(options, dimBindings(args));
  // The copy the reference runs on gets its misaligned weights copied out at load (each kernel would copy them on
  // every run); the copy that compiles keeps them in the file (the compiler re-lays out most of them anyway).
  LoadLimits runLimits = loadLimits(options, true);
  runLimits.alignWeights = true;
  LoadedModel original = loadModel(path, runLimits);
  LoadedModel compiled = loadModel(path, loadLimits(options, true));
  // A GE graph compared with the model it came from: the inputs are the source's.
  const std::optional<std::string> referencePath = args.value("--reference");
  if (referencePath && !compiled.model->precompiled)
    throw UsageError("--reference compares a compiled GE file (an .om, a Build-stage dump) with its source model; " + path +
                     " is not one (kiln run compares a model's own compile with it already)");
  if (referencePath) original = loadModel(*referencePath, runLimits);
  const std::string inputsFor = referencePath.value_or(path);
  // The inputs first: given data fixes the symbolic dims it fills.
  EmulationInputs inputs;
  std::string notEmulatable;  // why the functional run cannot happen; the timing is reported anyway
  try {
    inputs = emulationInputs(args, inputsFor, *original.model, options);
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
    return s.invalidModel ? 2 : 1;  // an invalid model is bad input
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
  // A graph GE compiled runs through its twin (kernels/ge); what cannot run is named.
  const bool geGraph = compiled.model->precompiled;
  std::optional<GeEmulation> geRun;
  std::optional<SourceComparison> sourceRun;
  const PrecisionGate gate = precisionGate(options, *compiled.model->graph);
  try {
    if (notEmulatable.empty() && geGraph && referencePath) {
      sourceRun = compareGeWithSource(*compiled.model, *original.model, inputs.tensors, gate, withLimits({}, options));
      report = sourceRun->ge.report;
      if (!sourceRun->ge.issues.empty()) notEmulatable = "not run: " + sourceRun->ge.notRunSummary();
    } else if (notEmulatable.empty() && geGraph) {
      geRun = emulateGeModel(*compiled.model, inputs.tensors, withLimits({}, options));
      report = geRun->report;
      if (!geRun->ran) notEmulatable = "not run: " + geRun->notRunSummary();
    } else if (notEmulatable.empty()) {
      ExecutionOptions execution = withLimits({}, options);
      execution.timedRuns = timedRuns;
      report = emulateModel(*original.model, *compiled.model, inputs.tensors, execution);
    }
  } catch (const NotEmulatable& e) {
    notEmulatable = e.what();
  } catch (const NodeFailed& e) {
    // Made-up inputs can lead where real ones never would (a branch for another sample rate): name them.
    const std::string made = madeUpInputsHint(*original.model, e.nodes(), inputs.tensors, inputs.madeUp);
    const std::string hint = binding.hint();
    throw std::runtime_error(path + ": " + e.what() + (made.empty() ? "" : "; " + made) +
                             (hint.empty() ? "" : "; " + hint));
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
  const std::string precision = geGraph ? std::string(computePrecisionName(gate.precision)) + " as GE built it"
                                        : options.getString("precision_mode");
  const std::vector<OutputVerdict> verdicts = sourceRun ? sourceRun->outputs : judgeOutputs(report, gate);
  const GeEmulation* ge = sourceRun ? &sourceRun->ge : geRun ? &*geRun : nullptr;
  const int runsTimed = geGraph ? 1 : timedRuns;  // a GE graph's run through its twin is timed once
  const std::string numericsFailure = firstFailure(verdicts);
  // Nothing to compare (a model without outputs): not measured, so not a pass.
  const bool nothingToCompare = notEmulatable.empty() && report.compiledError.empty() && verdicts.empty();
  bool failed = !notEmulatable.empty() || !report.compiledError.empty() || !numericsFailure.empty() || nothingToCompare;
  if (sourceRun && !sourceRun->firstDivergence.empty()) failed = true;
  for (const OutputError& e : expected) failed = failed || !e.diff.within();

  if (args.has("--json")) {
    Json j = Json::object();
    j.set("model", path);
    j.set("inputs", inputs.description);
    j.set("precision_mode", precision);
    j.set("reference_ms", report.referenceMs);
    j.set("compiled_ms", report.compiledMs);
    j.set("timed_runs", runsTimed);  // the times above: the fastest of these runs; the first runs' apart
    j.set("reference_first_ms", runsTimed > 1 ? report.referenceFirstMs : report.referenceMs);
    j.set("compiled_first_ms", runsTimed > 1 ? report.compiledFirstMs : report.compiledMs);
    j.set("compiled_prepare_ms", report.arena.prepareMs);
    j.set("reference_prepare_ms", report.referencePrepareMs);
    {  // what each run added to the process's resident memory at its peak; null: not measured
      Json m = Json::object();
      m.set("weights_bytes", constantBytes(og));
      // The compiled graph's constants: the weights a model computes at run time (ConstantOfShape, Expand...)
      // folded, re-laid out, cast: what its compiled run reads.
      m.set("compiled_weights_bytes", constantBytes(*compiled.model->graph));
      m.set("arena_bytes", report.arena.arenaBytes);
      m.set("reference_peak_bytes", report.referencePeakBytes ? Json(*report.referencePeakBytes) : Json());
      m.set("compiled_peak_bytes", report.compiledPeakBytes ? Json(*report.compiledPeakBytes) : Json());
      j.set("memory", m);
    }
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
        o.set("over_share", verdicts[i].overShare);  // elements over their bound, whatever the statistic judged
        if (gate.stat.kind != ErrorStat::Kind::Max) o.set("error_stat", verdicts[i].statValue);
      }
      outs.push(std::move(o));
    }
    j.set("outputs", std::move(outs));
    j.set("gate", gate.describe());
    j.set("error_stat", gate.stat.text());
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
    if (ge) j.set("ge", geRunJson(*ge, sourceRun ? &*sourceRun : nullptr, referencePath.value_or("")));
    j.set("soc", soc.name);
    if (recorder) j.set("run", recorder->runId());
    j.set("bound_dims", binding.shortText());
    j.set("shape_binding", binding.toJson());
    j.set("model_sink", options.getBool("model_sink"));
    j.set("latency_us", timeline.latencyUs);
    // Tasks whose shapes were not inferred count their fixed cost only: the latency is then a lower bound.
    j.set("unknown_cost_tasks", static_cast<int64_t>(timeline.unknownCostTasks));
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
                << "reference   " << formatDuration(report.referenceMs / 1000.0) << bestOf(runsTimed, report.referenceFirstMs)
                << (sourceRun  ? " (" + *referencePath + " on the reference kernels)"
                    : geGraph ? std::string(" (the file's own graph, fp16 computed in fp32, every tensor its own buffer)")
                              : std::string(" (original graph, every tensor its own buffer") +
                                    (report.referencePrepareMs > 0.05
                                         ? "; what depends on constants only computed before it in " +
                                               formatDuration(report.referencePrepareMs / 1000.0)
                                         : std::string()) +
                                    ")")
                << "\n";
    if (ge) printGeRun(*ge, sourceRun ? &*sourceRun : nullptr);
    if (notEmulatable.empty() && report.compiledError.empty())
      std::cout << "compiled    " << formatDuration(report.compiledMs / 1000.0) << bestOf(runsTimed, report.compiledFirstMs)
                << " (" << precision
                << (!ge ? "" : ge->inArena ? ", at GE's offsets" : ", no offsets in the file: a buffer per tensor") << ", "
                << report.arena.placedTensors << " tensors in one " << formatBytes(double(report.arena.arenaBytes))
                << " arena"
                << (report.arena.asideTensors
                        ? ", " + std::to_string(report.arena.asideTensors) + " unsized kept aside"
                        : "")
                << (report.arena.prepareMs > 0.05
                        ? "; its memory allocated and weights re-laid out for the kernels before it in " +
                              formatDuration(report.arena.prepareMs / 1000.0)
                        : "")
                << ")\n";
    if (!report.compiledError.empty()) std::cout << "compiled    could not run: " << report.compiledError << "\n";
    if (report.referencePeakBytes || report.compiledPeakBytes) {
      const auto peak = [](const std::optional<int64_t>& b) {
        return b ? formatBytes(double(*b)) : std::string("not measured");
      };
      std::cout << "memory      runs added at their peak: reference " << peak(report.referencePeakBytes)
                << ", compiled " << peak(report.compiledPeakBytes) << " (weights "
                << formatBytes(double(constantBytes(og))) << ")\n";
    }
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
    std::cout << "latency     " << (timeline.unknownCostTasks ? "at least " : "")
              << formatDuration(timeline.latencyUs / 1e6) << " simulated on " << soc.name << " ("
              << tasks.size() << " tasks, "
              << (timeline.unknownCostTasks ? std::to_string(timeline.unknownCostTasks) +
                                                  " of unknown cost (shapes not inferred), "
                                            : std::string())
              << (options.getBool("model_sink") ? std::string("sunk: no host launches")
                                                : std::to_string(timeline.hostLaunches) + " host launches") << ")\n";
    std::cout << "utilisation";
    for (const UnitUtilisation& u : timeline.units)
      if (u.busyUs > 0) std::cout << " " << simUnitName(u.unit) << " " << sci(100 * u.utilisation) << "%";
    std::cout << "\n";
    std::cout << "critical    " << criticalSummary(timeline) << "\n";
    if (!notEmulatable.empty()) std::cout << "functional  " << notEmulatable << "\n";
    if (nothingToCompare)
      std::cout << "numerics    not measured: the " << (og.outputs().empty() ? "model has no outputs" : "compiled run produced no outputs") << "\n";
    // The compiled graph holds an op its mode cannot run, or there was nothing to compare: nothing was measured,
    // which is not a pass.
    std::cout << ((report.compiledNotEmulatable || nothingToCompare) && numericsFailure.empty()
                      ? "NOT VERIFIED (numerics missing)"
                  : failed                                             ? "FAILED"
                                                                       : "ok")
              << "\n";
  }
  if (!historyError.empty()) return 1;
  return failed ? 1 : 0;
}

}  // namespace kiln::cli
