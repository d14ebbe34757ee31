// kiln.History: a history database read-only (runs, passes with their counters, the graph after any pass, the diff
// between any two passes), as `kiln history` and the workbench read it. A file that is not a Kiln history, or a
// newer one, raises kiln.Error naming it; nothing is ever written.
#include <memory>

#include <pybind11/stl.h>

#include "history/ge_dump_import.h"
#include "history/measured_import.h"
#include "history/measured_tasks.h"
#include "history/history_db.h"
#include "history/history_reader.h"
#include "py_support.h"

namespace kiln::py {
namespace {

struct PyHistory {
  explicit PyHistory(const std::string& path) : db(path, HistoryDb::Mode::ReadOnly), reader(db) {}
  HistoryDb db;
  HistoryReader reader;
};

pb::dict runDict(const RunInfo& r) {
  pb::dict d;
  d["id"] = r.id;
  d["model_path"] = r.modelPath;
  d["model_name"] = r.modelName;
  d["status"] = r.status;
  d["started_at"] = r.startedAt;
  d["finished_at"] = r.finishedAt;
  d["total_ms"] = r.totalMs;
  d["nodes_before"] = r.nodesBefore;
  d["nodes_after"] = r.nodesAfter;
  d["error"] = r.error;
  d["kiln_version"] = r.kilnVersion;
  d["passes"] = r.passCount;
  d["last_pass"] = r.lastPass;
  d["options_summary"] = r.optionsSummary;
  d["options"] = parsedJson(r.optionsJson, pb::none());
  d["shape_binding"] = parsedJson(r.shapeBindingJson, pb::none());
  return d;
}

pb::dict measuredTaskDict(const MeasuredTaskRow& t) {
  pb::dict d;
  d["task"] = t.task;
  d["name"] = t.name;
  d["op_type"] = t.opType;
  d["task_type"] = t.taskType;
  d["stream"] = t.stream;
  d["start_us"] = t.startUs;
  d["duration_us"] = t.durationUs;
  d["wait_us"] = t.waitUs;
  d["block_dim"] = t.blockDim;
  d["input_shapes"] = t.inputShapes;
  d["input_types"] = t.inputTypes;
  d["output_shapes"] = t.outputShapes;
  d["output_types"] = t.outputTypes;
  d["node_id"] = t.nodeId;
  d["matched_by"] = t.matchedBy;
  return d;
}

pb::object measuredDict(const MeasuredRun& m) {
  if (m.profile.source.empty()) return pb::none();
  pb::dict d;
  d["source"] = m.profile.source;
  d["tasks_file"] = m.profile.tasksFile;
  d["imported_at"] = m.profile.importedAt;
  d["skipped_rows"] = m.profile.skippedRows;
  d["static_total_bytes"] = m.profile.staticTotalBytes;
  pb::list tasks;
  for (const MeasuredTaskRow& t : m.tasks) tasks.append(measuredTaskDict(t));
  d["tasks"] = tasks;
  pb::list mem;
  for (const StaticMemoryRow& r : m.staticMemory) {
    pb::dict e;
    e["op_name"] = r.opName;
    e["graph"] = r.graph;
    e["bytes"] = r.bytes;
    e["node_start"] = r.nodeStart;
    e["node_end"] = r.nodeEnd;
    mem.append(e);
  }
  d["static_memory"] = mem;
  return d;
}

}  // namespace

void bindHistory(pb::module_& m) {
  pb::class_<PyHistory, std::shared_ptr<PyHistory>>(m, "History",
                                                      "A Kiln history database, opened read-only.")
      .def(pb::init([](const pb::object& path) {
             const std::string p = pathOf(path);
             pb::gil_scoped_release unlocked;
             return std::make_shared<PyHistory>(p);
           }),
           pb::arg("path"))
      .def_property_readonly("path", [](const PyHistory& h) { return h.db.path(); })
      .def("runs",
           [](const PyHistory& h) {
             std::vector<RunInfo> runs;
             {
               pb::gil_scoped_release unlocked;
               runs = h.reader.listRuns();
             }
             pb::list out;
             for (const RunInfo& r : runs) out.append(runDict(r));
             return out;
           },
           "Every run, oldest first.")
      .def("run", [](const PyHistory& h, int64_t id) { return runDict(h.reader.run(id)); }, pb::arg("run"))
      .def("passes",
           [](const PyHistory& h, int64_t run) {
             std::vector<PassInfo> passes;
             {
               pb::gil_scoped_release unlocked;
               passes = h.reader.passes(run);
             }
             pb::list out;
             for (const PassInfo& p : passes) out.append(passDict(p, true));
             return out;
           },
           pb::arg("run"), "The passes of a run, the imported graph (seq 0) first.")
      .def("graph",
           [](const PyHistory& h, int64_t run, int pass) {
             pb::gil_scoped_release unlocked;
             return h.reader.graphAt(run, pass);
           },
           pb::arg("run"), pb::arg("pass_seq"), "The graph after pass `pass_seq` (0: as imported).")
      .def("diff",
           [](const PyHistory& h, int64_t run, int from, int to) {
             pb::gil_scoped_release unlocked;
             return h.reader.diff(run, from, to);
           },
           pb::arg("run"), pb::arg("from_pass"), pb::arg("to_pass"),
           "What changed from pass `from_pass` to pass `to_pass` (either order).")
      .def("pass_diff",
           [](const PyHistory& h, int64_t run, int pass) {
             pb::gil_scoped_release unlocked;
             return h.reader.diff(run, pass);
           },
           pb::arg("run"), pb::arg("pass_seq"), "What pass `pass_seq` changed (against the pass recorded before it).")
      .def("measured",
           [](const PyHistory& h, int64_t run) {
             MeasuredRun measured;
             {
               pb::gil_scoped_release unlocked;
               h.reader.run(run);  // an unknown run raises
               measured = readMeasuredRun(h.db, run);
             }
             return measuredDict(measured);
           },
           pb::arg("run"),
           "The profile measured beside a run (kiln history import DB PROFILE): {'source', 'tasks_file', "
           "'imported_at', 'skipped_rows', 'static_total_bytes', 'tasks': [{'name', 'op_type', 'task_type', "
           "'stream', 'start_us', 'duration_us', ..., 'node_id', 'matched_by'}], 'static_memory': [...]}; None when "
           "the run has none.")
      .def("__repr__", [](const PyHistory& h) { return "<kiln.History '" + h.db.path() + "'>"; });

  m.def(
      "import_profile",
      [](const pb::object& profile, const pb::object& history, const pb::object& run) {
        const std::string src = pathOf(profile), path = pathOf(history);
        std::optional<int64_t> beside;
        if (!run.is_none()) beside = run.cast<int64_t>();
        MeasuredImportResult r;
        std::vector<std::string> notes;
        {
          pb::gil_scoped_release unlocked;
          const msprof::MeasuredProfile p = msprof::readMeasuredProfile(src);
          HistoryDb db(path);
          r = importMeasuredProfile(db, p, beside);
          notes = p.notes;
          notes.insert(notes.end(), r.notes.begin(), r.notes.end());
        }
        pb::dict out;
        out["run"] = r.runId;
        out["new_run"] = r.newRun;
        out["tasks"] = r.tasks;
        out["matched_by_name"] = r.byName;
        out["matched_by_original_name"] = r.byOriginalName;
        out["matched_by_type_and_shape"] = r.byTypeAndShape;
        out["unmatched"] = r.unmatched;
        out["notes"] = notes;
        return out;
      },
      pb::arg("profile"), pb::arg("history"), pb::arg("run") = pb::none(),
      "Imports a run measured by msprof (a mindstudio_profiler_output or ASCEND_PROFILER_OUTPUT folder, or one "
      "op_summary CSV) into a history, beside `run` (tasks matched to its nodes) or as a run of its own, as "
      "`kiln history import DB PROFILE [--run N]` does. Read it back with kiln.History(history).measured(run).");

  m.def(
      "import_ge_dump",
      [](const pb::object& dumps, const pb::object& history, const pb::object& fusionResult) {
        std::vector<std::string> paths;
        if (pb::isinstance<pb::list>(dumps) || pb::isinstance<pb::tuple>(dumps))
          for (const pb::handle& p : dumps) paths.push_back(pathOf(pb::reinterpret_borrow<pb::object>(p)));
        else
          paths.push_back(pathOf(dumps));
        const std::string path = pathOf(history);
        const std::string report = fusionResult.is_none() ? std::string() : pathOf(fusionResult);
        gedump::ImportResult r;
        {
          pb::gil_scoped_release unlocked;
          HistoryDb db(path);  // created when absent; a foreign or newer file is refused untouched
          r = gedump::importDumps(paths, db, report);
        }
        pb::list runs;
        for (const gedump::ImportedRun& run : r.runs) {
          pb::dict d;
          d["run"] = run.runId;
          d["graph"] = run.label;
          d["stages"] = run.stages;
          d["last_file"] = run.lastFile;
          d["fusion_passes"] = run.fusionPasses;
          runs.append(d);
        }
        pb::dict out;
        out["runs"] = runs;
        out["warnings"] = r.warnings;
        return out;
      },
      pb::arg("dumps"), pb::arg("history"), pb::arg("fusion_result") = pb::none(),
      "Imports GE graph dumps (a folder, a dump file, or a list of them: ge_proto_*.txt and ge_onnx_*.pbtxt as GE "
      "writes them with DUMP_GE_GRAPH) into a history, one run per compilation they record, as `kiln history import` "
      "does; ATC's fusion_result.json (given, or found beside the dumps) is attached. Read it back with "
      "kiln.History(history). Returns {'runs': [{'run', 'graph', 'stages', 'last_file', 'fusion_passes'}], "
      "'warnings'}; a broken dump raises kiln.Error naming the file.");
}

}  // namespace kiln::py
