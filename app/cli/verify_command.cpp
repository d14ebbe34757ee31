// kiln verify MODEL [--options F] [--set k=v]... [--inputs DIR | --random SEED] [--dim SYMBOL=N]... [--rtol X]
//                   [--history DB] [--json]
// Compiles the model and, after every pass, runs the graph on the same inputs and compares its outputs with the
// original's: a table of each pass's error and the first pass over tolerance ("which pass changed the numbers").
// Passes after the memory plan run inside the planned arena. With --history the compile and the per-pass errors are
// recorded (the workbench shows them as a column of the pass navigator). Exit 1 when a pass exceeds the tolerance.
#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/emulation_args.h"
#include "emulator/pass_verifier.h"
#include "emulator/precision_gate.h"
#include "history/history_recorder.h"
#include "io/model_loader.h"
#include "passes/pass_manager.h"
#include "pipeline/standard_pipeline.h"
#include "util/json.h"

namespace kiln::cli {

Options optionsFromArgs(const Args& args);  // compile_command.cpp

namespace {

std::string sci(const std::optional<double>& v) {
  if (!v) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", *v);
  return buf;
}

}  // namespace

int runVerify(const Argv& argv) {
  const Args args = parseArgs(argv, {{"--json", "--per-pass"},
                                     {"--options", "--set", "--inputs", "--random", "--value", "--dim", "--rtol", "--history"}});
  if (args.positional.size() != 1 || (args.value("--inputs") && args.value("--random")))
    throw UsageError("usage: kiln verify MODEL [--options F] [--set k=v] [--inputs DIR|FILE.npz | --random SEED] "
                     "[--dim SYMBOL=N] [--rtol X] [--history DB] [--json]");
  const std::string path = args.positional[0];
  Options options = optionsFromArgs(args);
  std::optional<double> rtol;  // else each pass's precision gate (verify.rtol_fp32 / _fp16 / _bf16)
  if (auto text = args.value("--rtol")) {
    char* end = nullptr;
    rtol = std::strtod(text->c_str(), &end);
    if (!end || *end || !(*rtol > 0 && *rtol < 1)) throw UsageError("--rtol takes a number in (0, 1), not '" + *text + "'");
  }
  runDimBindings(options, dimBindings(args));
  LoadedModel loaded = loadModel(path, loadLimits(options, true));
  Model& model = *loaded.model;
  const EmulationInputs inputs = emulationInputs(args, path, model, options);  // given data fixes its dims
  const ShapeBinding binding = emulationBinding(path, model, options);
  const std::string bound = binding.text();

  std::unique_ptr<HistoryDb> db;
  std::unique_ptr<HistoryRecorder> recorder;
  std::string historyError;
  if (auto h = args.value("--history")) {
    db = HistoryDb::forAppending(*h);
    recorder = std::make_unique<HistoryRecorder>(*db, path);
  }
  PassVerifier verifier(inputs.tensors, rtol, [&](const PassAccuracyRow& row) {
    if (!db || !recorder || recorder->runId() == 0 || !historyError.empty()) return;
    try {
      writePassAccuracy(*db, recorder->runId(), row);
    } catch (const std::exception& e) {
      historyError = e.what();
    }
  });
  PassManager pm;
  addStandardPasses(pm, options, {});
  if (recorder) pm.addObserver(recorder.get());  // first: the pass row exists before its accuracy row
  pm.addObserver(&verifier);
  RunSummary s;
  try {
    s = pm.run(model, options);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  const auto& results = verifier.results();
  const PrecisionGate gate = precisionGate(options, *model.graph);
  const std::string gateText = rtol ? "cosine >= " + sci(options.getNumber("verify.min_cosine")) + ", rtol " +
                                          sci(*rtol) + " for every pass (--rtol)"
                                    : "each pass by what its graph computes in: fp32 cosine >= " +
                                          sci(gate.minCosine) + ", rtol " + sci(options.getNumber("verify.rtol_fp32")) +
                                          "; fp16 rtol " + sci(options.getNumber("verify.rtol_fp16")) + "; bf16 rtol " +
                                          sci(options.getNumber("verify.rtol_bf16")) +
                                          " (of each value and the output's scale)";
  const int first = verifier.firstExceeding();
  if (args.has("--json")) {
    Json j = Json::object();
    j.set("model", path);
    j.set("inputs", inputs.description);
    j.set("bound_dims", binding.shortText());
    j.set("shape_binding", binding.toJson());
    j.set("rtol", rtol ? Json(*rtol) : Json());
    j.set("gate", gateText);
    if (recorder) j.set("run", recorder->runId());
    Json passes = Json::array();
    for (const PassAccuracy& a : results) {
      Json p = Json::object();
      p.set("seq", a.row.seq);
      p.set("pass", a.pass);
      p.set("status", a.row.status);
      p.set("max_abs", a.row.maxAbs ? Json(*a.row.maxAbs) : Json());
      p.set("max_rel", a.row.maxRel ? Json(*a.row.maxRel) : Json());
      p.set("cosine", a.row.cosine ? Json(*a.row.cosine) : Json());
      if (!a.row.detail.empty()) p.set("detail", a.row.detail);
      p.set("ms", a.ms);  // emulating the graph after this pass (0: unchanged, the numbers carried over)
      p.set("nodes_run", a.nodesRun);
      p.set("nodes_reused", a.nodesReused);
      passes.push(std::move(p));
    }
    j.set("passes", std::move(passes));
    j.set("first_exceeding", first >= 0 ? Json(results[size_t(first)].pass) : Json());
    if (!verifier.baselineError().empty()) j.set("not_emulatable", verifier.baselineError());
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << "model   " << path << "\ninputs  " << inputs.description << (bound.empty() ? "" : " (" + bound + ")")
              << "\ngate    " << gateText << "\n\n";
    std::printf("%4s  %-32s %-15s %10s %10s %10s %9s %11s\n", "seq", "pass", "status", "max abs", "max rel", "cosine",
                "ms", "nodes run");
    double totalMs = 0;
    for (const PassAccuracy& a : results) {
      totalMs += a.ms;
      const std::string run = a.ms > 0 ? std::to_string(a.nodesRun) + (a.nodesReused ? "/" + std::to_string(a.nodesRun + a.nodesReused) : "")
                                       : std::string("-");
      std::printf("%4d  %-32s %-15s %10s %10s %10s %9s %11s%s\n", a.row.seq, a.pass.c_str(), a.row.status.c_str(),
                  sci(a.row.maxAbs).c_str(), sci(a.row.maxRel).c_str(),
                  a.row.cosine ? std::to_string(*a.row.cosine).c_str() : "-",
                  a.ms > 0 ? sci(a.ms).c_str() : "-", run.c_str(),
                  &a == &results[size_t(std::max(first, 0))] && first >= 0 ? "   <- first below the gate" : "");
    }
    std::printf("emulation: %s ms over the passes that changed the graph; a node unchanged since the last run, with\n"
                "inputs unchanged, reuses its outputs (nodes run: run/total)\n", sci(totalMs).c_str());
    std::cout << "\n";
    if (!verifier.baselineError().empty())
      std::cout << "the original graph does not run: " << verifier.baselineError() << "\n";
    else if (first >= 0)
      std::cout << "first pass below the gate: " << results[size_t(first)].pass << " (" << results[size_t(first)].row.detail
                << ")\n";
    else
      std::cout << "every pass passed its gate\n";
    if (recorder && recorder->error().empty())
      std::cout << "recorded as run " << recorder->runId() << " in " << *args.value("--history") << "\n";
    else if (recorder)  // the error follows on stderr; the passes committed before it stay readable
      std::cout << "run " << recorder->runId() << " in " << *args.value("--history") << ": recording stopped early\n";
  }
  if (recorder && !recorder->error().empty()) historyError = recorder->error();
  if (!historyError.empty()) {
    std::cerr << "kiln verify: history: " << historyError << "\n";
    return 1;
  }
  if (s.status == RunStatus::Failed) {
    std::cerr << "kiln verify: " << path << ": pass " << s.error << "\n";
    return s.invalidModel ? 2 : 1;  // an invalid model is bad input
  }
  if (!verifier.baselineError().empty()) return 2;
  return first >= 0 ? 1 : 0;
}

}  // namespace kiln::cli
