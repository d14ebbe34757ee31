#pragma once
// A SoC profile fitted to measured runs (`kiln calibrate`). Each measured task of an msprof profile becomes the task
// Kiln's cost model would cost — one op of the recorded type over the recorded shapes, types and formats, on the
// recorded number of cores — so "simulated" means exactly what a compile's timeline would say for that op.
//
// What is fitted, per op type (GE's name: the profile's OP Type, and what Kiln calls GE's name for its own ops), and
// nowhere else, so a fit from MatMulV2 tasks leaves Gelu and every other op type as the profile had them:
//   - with tasks of at least two work sizes (modelled work differing by 20% or more): setup time and work scale by
//     least squares, measured = setup + scale × modelled work;
//   - with one size: the modelled throughput is kept (scale 1) and the setup is what the measurement leaves over;
//     if the model already overshoots, setup 0 and the scale shrinks to the median measured / modelled.
// The fitted numbers go into the profile's `op_calibration` (soc_profile.h), with the count of tasks behind them.
// Tasks the model cannot place (no shapes recorded, an op type Kiln does not know, a host or communication task) are
// listed with why, never guessed.
#include <cstdint>
#include <string>
#include <vector>

#include "emulator/timing/soc_profile.h"
#include "emulator/timing/task_cost.h"
#include "io/msprof/msprof_profile.h"
#include "util/json.h"

namespace kiln::calibration {

// What the cost model says about one measured task; `why` says why it could not be costed when `placed` is false.
struct CostedTask {
  bool placed = false;
  std::string why;
  TaskCost cost;
};
CostedTask costMeasuredTask(const msprof::MeasuredTask& t, const SocProfile& profile);

struct OpTypeFit {
  std::string opType;
  std::string unit;           // "cube", "vector", "aicpu": where the model places it
  int64_t tasks = 0;
  int sizes = 0;              // distinct modelled work sizes among them
  double measuredUs = 0;      // mean per task
  double simulatedBeforeUs = 0, simulatedAfterUs = 0;          // mean per task
  double medianAbsRelErrorBefore = 0, medianAbsRelErrorAfter = 0;  // median over tasks of |simulated/measured - 1|
  OpCalibration fitted;
};

struct Unplaced {
  std::string opType, why;
  int64_t tasks = 0;
};

struct Result {
  SocProfile before, after;
  std::vector<OpTypeFit> opTypes;  // most measured time first
  std::vector<Unplaced> unplaced;
  int64_t tasksRead = 0, tasksUsed = 0;
  double medianAbsRelErrorBefore = 0, medianAbsRelErrorAfter = 0;  // over every placed task
  std::vector<std::string> sources;
};

// The result as `kiln calibrate --json` prints it and bench_msprof records it: profiles, soc, tasks, tasks_used,
// median_abs_rel_error_before/_after, op_types [{op_type, unit, tasks, sizes, measured_us, simulated_before_us,
// simulated_after_us, median_abs_rel_error_before/_after, setup_us, work_scale, basis}], unplaced [{op_type, tasks, why}].
Json resultJson(const Result& r);

// Throws std::runtime_error when no task of any profile can be placed (nothing to fit).
Result calibrate(const std::vector<msprof::MeasuredProfile>& profiles, const SocProfile& base);

}  // namespace kiln::calibration
