// The module's smaller entry points: planning a memory trace (as `kiln plan`), reading a batch's summary.json (each
// case's RunMetrics and gates, as `kiln batch` wrote them), the option schema.
#include <pybind11/stl.h>

#include "batch/batch_summary.h"
#include "memory/memory_plan.h"
#include "memory/trace_csv.h"
#include "py_support.h"
#include "report/run_metrics.h"

namespace kiln::py {

void bindTools(pb::module_& m) {
  m.def(
      "plan_trace",
      [](const pb::object& file, const std::string& planner, int64_t alignment) {
        const std::string path = pathOf(file);
        std::vector<memory::Buffer> buffers;
        memory::Plan plan;
        std::string invalid;
        {
          pb::gil_scoped_release unlocked;
          buffers = memory::readTraceCsv(path);
          plan = memory::planMemory(buffers, planner, alignment);
          invalid = memory::validatePlan(buffers, plan);
        }
        if (!invalid.empty()) throw std::runtime_error(path + ": the plan is invalid: " + invalid);
        pb::list rows;
        for (size_t i = 0; i < buffers.size(); ++i) {
          pb::dict b;
          b["id"] = buffers[i].id;
          b["lower"] = buffers[i].lower;
          b["upper"] = buffers[i].upper;
          b["size"] = buffers[i].size;
          b["offset"] = plan.offset[i];
          rows.append(b);
        }
        pb::dict out;
        out["planner"] = plan.planner;
        out["arena_bytes"] = plan.arenaBytes;
        out["lower_bound_bytes"] = plan.lowerBound;
        out["alignment"] = plan.alignment;
        out["ms"] = plan.ms;
        out["detail"] = plan.detail;
        out["buffers"] = rows;
        return out;
      },
      pb::arg("path"), pb::arg("planner") = "", pb::arg("alignment") = 1,
      "Plans a memory trace (CSV: id, lower, upper, size per buffer): the arena, the lower bound and every buffer's "
      "offset. planner: one of planners() ('' for the default).");
  m.def("planners", &memory::plannerNames, "The memory planners plan_trace accepts.");

  m.def(
      "read_batch_summary",
      [](const pb::object& file) {
        const std::string path = pathOf(file);
        BatchSummary s;
        {
          pb::gil_scoped_release unlocked;
          s = readBatchSummary(path);
        }
        pb::list cases;
        for (const CaseRecord& c : s.cases) {
          pb::dict d = toPython(caseRecordToJson(c)).cast<pb::dict>();
          d["passed"] = c.passed();
          cases.append(d);
        }
        pb::dict out;
        out["option_sets"] = s.optionSets;
        out["shard"] = s.shard;
        out["total_ms"] = s.totalMs;
        out["failed"] = s.failed();
        out["skipped_gates"] = s.skippedGates();
        out["cases"] = cases;
        return out;
      },
      pb::arg("path"),
      "Reads a `kiln batch` summary.json: per case its RunMetrics (compile summary, latency, errors, the precision "
      "verdict), its gates and whether it passed. Raises kiln.Error naming the file for a malformed one.");

  m.def(
      "option_schema",
      [] {
        pb::list out;
        for (const OptionSpec& s : Options::schema()) {
          pb::dict d;
          d["key"] = s.key;
          d["help"] = s.help;
          out.append(d);
        }
        return out;
      },
      "Every option key with its help text.");
}

}  // namespace kiln::py
