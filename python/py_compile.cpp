// kiln.compile (the standard pipeline over a model file, optionally recorded in a history), its CompileResult with
// the passes' records, the compiled graph, the compile summary and the simulated timeline; kiln.run (compile, then
// the functional emulation of the original and the compiled graph on the same inputs, judged by the precision
// gate), as `kiln compile` and `kiln run` do. Long work runs with the GIL released.
#include <filesystem>
#include <memory>
#include <optional>

#include <pybind11/stl.h>

#include "emulator/emulation.h"
#include "emulator/ge_emulation.h"
#include "emulator/emulation_inputs.h"
#include "emulator/precision_gate.h"
#include "emulator/reference_executor.h"
#include "emulator/timing/model_soc.h"
#include "emulator/timing/soc_profile.h"
#include "emulator/timing/task_cost.h"
#include "emulator/timing/timeline_sim.h"
#include "history/history_db.h"
#include "history/history_opening.h"
#include "history/history_reader.h"
#include "history/history_recorder.h"
#include "io/model_loader.h"
#include "pipeline/standard_pipeline.h"
#include "py_support.h"
#include "py_types.h"
#include "report/compile_summary.h"
#include "report/run_metrics.h"
#include "schedule/task_list.h"

namespace kiln::py {
namespace {

LoadLimits limitsOf(const Options& o) {
  LoadLimits l;
  l.maxModelBytes = static_cast<uint64_t>(o.getInt("max_model_bytes"));
  return l;
}

// The pipeline over `model` (loaded from `path`), recorded in the history `opening` opens when given.
std::shared_ptr<CompileResult> compileLoaded(const std::string& path, Model& model, const Options& options,
                                             std::optional<HistoryOpening>& history,
                                             const std::optional<std::string>& until) {
  auto out = std::make_shared<CompileResult>();
  out->path = path;
  out->options = options;
  PassManager pm;
  addStandardPasses(pm, options, {});
  if (until) pm.setUntil(*until);
  std::unique_ptr<HistoryDb> db;
  std::unique_ptr<HistoryRecorder> recorder;
  if (history) {
    db = history->take();  // refuses foreign or newer files, which stay untouched
    recorder = std::make_unique<HistoryRecorder>(*db, path);
    pm.addObserver(recorder.get());
  }
  out->summary = pm.run(model, options);
  if (recorder) {
    recorder->flush();
    out->runId = recorder->runId();
    out->historyError = recorder->error();
  }
  return out;
}

Timeline simulate(const Model& compiled, const Options& options, const std::optional<std::string>& soc,
                  SocProfile* used = nullptr) {
  const SocProfile profile = SocProfile::load(soc.value_or(socVersionFor(compiled, options)));
  if (used) *used = profile;
  return simulateTimeline(buildTaskList(*compiled.graph, profile.aiCores), profile, options.getBool("model_sink"));
}

pb::dict timelineDict(const Timeline& t) {
  pb::list tasks;
  for (const TimelineEntry& e : t.entries) {
    pb::dict d;
    d["task"] = e.task;
    d["type"] = taskTypeName(e.type);
    d["stream"] = e.stream;
    d["node"] = e.node ? pb::cast(e.node->id()) : pb::none();
    d["name"] = e.node ? pb::cast(e.node->name()) : pb::none();
    d["op_type"] = e.node ? pb::cast(e.node->opType()) : pb::none();
    d["event"] = e.event >= 0 ? pb::cast(e.event) : pb::none();
    d["unit"] = std::string(simUnitName(e.unit));
    d["cores"] = e.cores;
    d["start_us"] = e.startUs;
    d["end_us"] = e.endUs;
    d["flops"] = e.flops;
    d["bytes"] = e.bytes;
    d["memory_bound"] = e.memoryBound;
    tasks.append(d);
  }
  pb::dict out;
  out["latency_us"] = t.latencyUs;
  out["host_launches"] = t.hostLaunches;
  out["host_launch_us"] = t.hostLaunchUs;
  out["critical_path"] = t.criticalPath;
  out["tasks"] = tasks;
  return out;
}

// A compile's pass record in the history's terms, so both print alike (py_support's passDict).
PassInfo passInfoOf(const PassRecord& p) {
  PassInfo out;
  out.seq = p.index;
  out.stage = std::string(stageName(p.stage));
  out.name = p.name;
  out.ms = p.ms;
  out.changed = p.changed;
  out.counters = p.counters;
  out.nodesBefore = p.nodesBefore;
  out.nodesAfter = p.nodesAfter;
  out.error = p.error;
  return out;
}

const char* statusName(RunStatus s) {
  return s == RunStatus::Ok ? "ok" : s == RunStatus::Failed ? "failed" : "stopped";
}

}  // namespace

void bindCompile(pb::module_& m) {
  pb::class_<CompileResult, std::shared_ptr<CompileResult>>(m, "CompileResult",
                                                             "One compile: its passes, the compiled graph, summary.")
      .def_readonly("path", &CompileResult::path)
      .def_readonly("run_id", &CompileResult::runId, "the run in the history (0 when none was given)")
      .def_readonly("history_error", &CompileResult::historyError)
      .def_property_readonly("status", [](const CompileResult& r) { return statusName(r.summary.status); })
      .def_property_readonly("error", [](const CompileResult& r) { return r.summary.error; })
      .def_property_readonly("ok", [](const CompileResult& r) { return r.summary.status != RunStatus::Failed; })
      .def_property_readonly("ms", [](const CompileResult& r) { return r.summary.ms; })
      .def_property_readonly("nodes_before", [](const CompileResult& r) { return r.summary.nodesBefore; })
      .def_property_readonly("nodes_after", [](const CompileResult& r) { return r.summary.nodesAfter; })
      .def_property_readonly("warnings", [](const CompileResult& r) { return r.summary.warnings; })
      .def_property_readonly(
          "passes",
          [](const CompileResult& r) {
            pb::list out;
            for (const PassRecord& p : r.summary.passes) out.append(passDict(passInfoOf(p), false));
            return out;
          },
          "one dict per pass run: seq, stage, name, ms, changed, counters, nodes_before, nodes_after, error")
      .def_property_readonly("options", [](const CompileResult& r) { return toPython(r.options.toJson()); })
      .def_property_readonly("graph", [](const CompileResult& r) { return snapshotOf(*r.compiled->graph); },
                             "the graph after the last pass run")
      .def_property_readonly(
          "summary",
          [](const CompileResult& r) {
            return toPython(compileSummaryToJson(summarizeCompile(*r.compiled, r.summary)));
          },
          "fusions by rule, TransData, streams, events, arena, lower bound, no-reuse bytes, weights, tasks (as "
          "kiln compile --json)")
      .def(
          "timeline",
          [](const CompileResult& r, const std::optional<std::string>& soc) {
            Timeline t;
            {
              pb::gil_scoped_release unlocked;
              t = simulate(*r.compiled, r.options, soc);
            }
            return timelineDict(t);
          },
          pb::arg("soc") = pb::none(),
          "The simulated run on the SoC (a name or a profile file; default: the model's soc_version): latency and "
          "one dict per task (stream, node, unit, start_us, end_us, ...).")
      .def("__repr__", [](const CompileResult& r) {
        return "<kiln.CompileResult '" + r.path + "' " + statusName(r.summary.status) + ", " +
               std::to_string(r.summary.passes.size()) + " passes, " + std::to_string(r.summary.nodesBefore) + " -> " +
               std::to_string(r.summary.nodesAfter) + " nodes>";
      });

  m.def(
      "_compile",
      [](const std::string& path, const pb::object& options, const pb::dict& overrides,
         const std::optional<std::string>& history, const std::optional<std::string>& until) {
        const Options o = optionsFrom(options, overrides);
        pb::gil_scoped_release unlocked;
        std::optional<HistoryOpening> opening;
        if (history) opening.emplace(*history);  // opened while the model is read
        LoadedModel loaded = loadModel(path, limitsOf(o));
        auto r = compileLoaded(path, *loaded.model, o, opening, until);
        r->compiled = std::shared_ptr<Model>(std::move(loaded.model));
        return r;
      },
      pb::arg("path"), pb::arg("options"), pb::arg("overrides"), pb::arg("history"), pb::arg("until"));

  m.def(
      "_run",
      [](const std::string& path, const pb::object& options, const pb::dict& overrides,
         const std::optional<std::string>& inputs, std::optional<uint32_t> seed,
         const std::optional<std::string>& history, const std::optional<std::string>& referencePath) {
        Options o = optionsFrom(options, overrides);
        std::optional<SourceComparison> source;
        std::optional<GeEmulation> geRun;
        EmulationReport report;
        std::string notEmulatable;
        std::vector<OutputVerdict> verdicts;
        std::optional<PrecisionGate> gate;
        std::shared_ptr<CompileResult> r;
        Timeline timeline;
        std::string inputsFrom;
        {
          pb::gil_scoped_release unlocked;
          std::optional<HistoryOpening> opening;
          if (history) opening.emplace(*history);  // opened while the models are read
          LoadedModel original = loadModel(referencePath.value_or(path), limitsOf(o));
          LoadedModel compiled = loadModel(path, limitsOf(o));
          if (referencePath && !compiled.model->precompiled)
            throw std::invalid_argument("reference= compares a compiled GE file (an .om, a Build-stage dump) with its "
                                        "source model; " + path + " is not one");
          EmulationInputs data;
          try {
            data = loadEmulationInputs(inputs, seed, referencePath.value_or(path), *original.model, o,
                                       o.getInt("emulator.max_input_bytes"));
            inputsFrom = data.description;
          } catch (const LoadError&) {
            throw;
          } catch (const std::invalid_argument&) {
            throw;
          } catch (const std::runtime_error& e) {
            notEmulatable = std::string("no input data: ") + e.what();
          }
          bindForEmulation(*original.model, o);
          r = compileLoaded(path, *compiled.model, o, opening, std::nullopt);
          r->compiled = std::shared_ptr<Model>(std::move(compiled.model));
          if (r->summary.status != RunStatus::Failed) {
            timeline = simulate(*r->compiled, o, std::nullopt);
            gate = precisionGate(o, *r->compiled->graph);
            if (notEmulatable.empty() && r->compiled->precompiled) {  // a GE graph: its twin (kernels/ge)
              if (referencePath) {
                source = compareGeWithSource(*r->compiled, *original.model, data.tensors, *gate, withLimits({}, o));
                report = source->ge.report;
                if (!source->ge.issues.empty()) notEmulatable = "not run: " + source->ge.notRunSummary();
              } else {
                geRun = emulateGeModel(*r->compiled, data.tensors, withLimits({}, o));
                report = geRun->report;
                if (!geRun->ran) notEmulatable = "not run: " + geRun->notRunSummary();
              }
            } else if (notEmulatable.empty()) {
              try {
                report = emulateModel(*original.model, *r->compiled, data.tensors, withLimits({}, o));
                if (report.compiledNotEmulatable) notEmulatable = report.compiledError;
              } catch (const NotEmulatable& e) {
                notEmulatable = e.what();
              }
            }
            if (notEmulatable.empty() && report.compiledError.empty())
              verdicts = source ? source->outputs : judgeOutputs(report, *gate);
          }
        }
        pb::dict out;
        out["compile"] = r;
        if (r->summary.status == RunStatus::Failed) {
          out["passed"] = pb::none();
          out["reason"] = "compile failed: pass " + r->summary.error;
          return out;
        }
        out["inputs"] = inputsFrom;
        out["timeline"] = timelineDict(timeline);
        pb::dict reference, outputs;
        for (size_t i = 0; i < report.reference.size() && i < r->compiled->graph->outputs().size(); ++i)
          reference[pb::str(r->compiled->graph->outputs()[i]->name())] = toNumpy(report.reference[i]);
        for (size_t i = 0; i < report.compiled.size() && i < r->compiled->graph->outputs().size(); ++i)
          outputs[pb::str(r->compiled->graph->outputs()[i]->name())] = toNumpy(report.compiled[i]);
        out["reference"] = reference;
        out["outputs"] = outputs;
        pb::list vs;
        for (const OutputVerdict& v : verdicts) {
          pb::dict d;
          d["output"] = v.name;
          d["passed"] = v.passed;
          d["reason"] = v.reason;
          d["cosine"] = v.diff.cosine;
          d["max_abs_error"] = v.diff.maxAbs;
          vs.append(d);
        }
        out["verdicts"] = vs;
        if (source) {  // per op GE kept the names of, against the source's op it absorbed
          pb::list nodes;
          for (const NodeComparison& c : source->nodes) {
            pb::dict d;
            d["op"] = c.geOp;
            d["type"] = c.geType;
            d["source_node"] = c.sourceNode;
            d["passed"] = c.verdict.passed;
            d["reason"] = c.verdict.reason;
            d["cosine"] = c.verdict.diff.cosine;
            nodes.append(d);
          }
          out["nodes"] = nodes;
          out["first_divergence"] = source->firstDivergence.empty() ? pb::object(pb::none()) : pb::str(source->firstDivergence);
        }
        // A verdict only where the numbers were measured: missing is None, never a pass.
        if (!notEmulatable.empty() || !report.compiledError.empty() || verdicts.empty()) {
          out["passed"] = pb::none();
          out["reason"] = "numerics missing: " + (notEmulatable.empty() ? report.compiledError : notEmulatable);
        } else {
          std::string first = firstFailure(verdicts);
          if (first.empty() && source && !source->firstDivergence.empty()) first = "op " + source->firstDivergence;
          out["passed"] = first.empty();
          out["reason"] = first.empty() ? "every output passed the " + gate->describe() : first;
        }
        const bool measured = notEmulatable.empty() && report.compiledError.empty();
        RunMetrics metrics = collectRunMetrics(*r->compiled, r->summary, &timeline, measured ? &report : nullptr,
                                               gate ? &*gate : nullptr);
        metrics.model = path;
        out["metrics"] = toPython(runMetricsToJson(metrics));
        return out;
      },
      pb::arg("path"), pb::arg("options"), pb::arg("overrides"), pb::arg("inputs"), pb::arg("seed"),
      pb::arg("history"), pb::arg("reference") = pb::none());
}

}  // namespace kiln::py
