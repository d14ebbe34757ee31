#include "emulator/timing/calibration.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <stdexcept>
#include <unordered_map>

#include "io/om/ge_model_builder.h"
#include "ir/model.h"
#include "ir/opdefs/op_registry.h"
#include "io/msprof/measured_tensors.h"
#include "kernels/ge/ge_lowering.h"
#include "schedule/task_list.h"

namespace kiln::calibration {

namespace {

// GE's op types whose cost formula Kiln knows under the ONNX name (estimateCost counts a Softmax at 5 operations per
// element, a normalisation at 8, ...). Types not here keep GE's name: the cube ops (Conv2D, MatMulV2, BatchMatMul)
// are recognised under it, element-wise ops share their names with ONNX.
std::string costingType(const std::string& geType) {
  static const std::map<std::string, std::string, std::less<>> kOnnx = {
      {"SoftmaxV2", "Softmax"},         {"LogSoftmaxV2", "LogSoftmax"},     {"LayerNorm", "LayerNormalization"},
      {"LayerNormV3", "LayerNormalization"}, {"BNInference", "BatchNormalization"},
      {"BNInferenceD", "BatchNormalization"}, {"ReduceMeanD", "ReduceMean"}, {"ReduceSumD", "ReduceSum"},
      {"ReduceMaxD", "ReduceMax"},      {"RealDiv", "Div"},                 {"Maximum", "Max"},
      {"Minimum", "Min"},               {"FastGelu", "Gelu"},               {"GeluV2", "Gelu"},
      {"Swish", "Sigmoid"},             {"Exp", "Exp"},                     {"Rsqrt", "Reciprocal"},
      {"AvgPool", "AveragePool"},       {"Pooling", "MaxPool"},             {"SquareSumV1", "ReduceSumSquare"},
  };
  auto it = kOnnx.find(geType);
  return it == kOnnx.end() ? geType : it->second;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double absRelError(double simulated, double measured) {
  return measured > 0 ? std::fabs(simulated / measured - 1.0) : 0.0;
}

// The work part of a cost (what scales with the task's size): the roofline's larger side.
double workUs(const TaskCost& c) { return std::max(c.computeUs, c.memoryUs); }

}  // namespace

CostedTask costMeasuredTask(const msprof::MeasuredTask& t, const SocProfile& profile) {
  CostedTask out;
  std::string taskType = t.taskType;
  std::transform(taskType.begin(), taskType.end(), taskType.begin(), [](unsigned char c) { return char(std::toupper(c)); });
  const bool aiCpu = taskType == "AI_CPU";
  const bool aiCore = taskType.rfind("AI_CORE", 0) == 0 || taskType.rfind("AI_VECTOR", 0) == 0 ||
                      taskType.rfind("MIX_", 0) == 0;
  if (!aiCpu && !aiCore) {
    out.why = "a " + (t.taskType.empty() ? std::string("task of no recorded type") : t.taskType + " task") +
              ", not a kernel the cost model costs";
    return out;
  }
  if (t.durationUs <= 0) {
    out.why = "no measured duration";
    return out;
  }
  const auto inputs = msprof::tensorTypes(t.inputShapes, t.inputTypes, t.inputFormats, "input", out.why);
  if (!inputs) return out;
  const auto outputs = msprof::tensorTypes(t.outputShapes, t.outputTypes, t.outputFormats, "output", out.why);
  if (!outputs) return out;
  if (outputs->empty()) {
    out.why = "no outputs recorded";
    return out;
  }

  const std::string type = costingType(t.opType);
  Model m;
  Graph& g = *m.graph;
  std::vector<Value*> ins;
  for (size_t i = 0; i < inputs->size(); ++i) ins.push_back(g.addInput("in" + std::to_string(i), (*inputs)[i]));
  Node* n = g.addNode(type, ins, outputs->size(), t.name.empty() ? type : t.name,
                      type == t.opType && !OpRegistry::global().find("", type, 17) ? om::kGeDomain : "");
  for (size_t i = 0; i < outputs->size(); ++i) n->output(i)->setType((*outputs)[i]);
  const bool vectorTask = taskType.find("VECTOR") != std::string::npos || taskType == "MIX_AIV";
  if (vectorTask) n->setAnnotation("unit", "vector");

  const bool cube = cubeShapeOf(*n).m > 0;
  const bool known = cube || n->domain().empty() || hasOwnCostFormula(type) || geops::lowersGeType(t.opType);
  if (!known) {
    out.why = "op type '" + t.opType + "' is not one Kiln's cost model knows";
    return out;
  }
  Task task;
  task.type = aiCpu ? TaskType::KernelEx : TaskType::Kernel;
  task.node = n;
  task.blockDim = t.blockDim.value_or(0);
  if (task.blockDim <= 0) task.blockDim = blockDimOf(*n, vectorTask && profile.vectorCores > 0 ? profile.vectorCores
                                                                                              : profile.aiCores);
  out.cost = taskCost(task, profile);
  if (!(out.cost.durationUs > 0) || !std::isfinite(out.cost.durationUs)) {
    out.why = "the cost model gives it no time";
    return out;
  }
  out.placed = true;
  return out;
}

Result calibrate(const std::vector<msprof::MeasuredProfile>& profiles, const SocProfile& base) {
  Result r;
  r.before = base;
  r.after = base;

  struct Sample {
    double measured, simulatedBefore, work;
  };
  struct Group {
    std::string unit;
    std::vector<Sample> samples;
  };
  std::map<std::string, Group> groups;
  std::map<std::string, Unplaced> unplaced;
  // The fit starts from the profile without any earlier calibration of the type: "before" is what the profile
  // given says, the fit's base is the uncalibrated model.
  SocProfile uncalibrated = base;
  uncalibrated.opCalibration.clear();

  // A profile repeats the same op over the same shapes step after step: each distinct task is costed once.
  std::unordered_map<std::string, std::pair<CostedTask, CostedTask>> costed;  // before, uncalibrated
  for (const msprof::MeasuredProfile& p : profiles) {
    r.sources.push_back(p.source);
    for (const msprof::MeasuredTask& t : p.tasks) {
      ++r.tasksRead;
      const std::string key = t.opType + '\x1f' + t.taskType + '\x1f' + t.inputShapes + '\x1f' + t.inputTypes + '\x1f' +
                              t.inputFormats + '\x1f' + t.outputShapes + '\x1f' + t.outputTypes + '\x1f' +
                              t.outputFormats + '\x1f' + std::to_string(t.blockDim.value_or(-1)) + '\x1f' +
                              (t.durationUs > 0 ? "1" : "0");
      auto it = costed.find(key);
      if (it == costed.end())
        it = costed.emplace(key, std::pair{costMeasuredTask(t, base), costMeasuredTask(t, uncalibrated)}).first;
      const CostedTask& before = it->second.first;
      if (!before.placed) {
        Unplaced& u = unplaced[t.opType + "\x1f" + before.why];
        u.opType = t.opType;
        u.why = before.why;
        ++u.tasks;
        continue;
      }
      const CostedTask& plain = it->second.second;
      Group& grp = groups[t.opType];
      grp.unit = std::string(simUnitName(plain.cost.unit));
      grp.samples.push_back({t.durationUs, before.cost.durationUs, workUs(plain.cost)});
      ++r.tasksUsed;
    }
  }
  for (auto& [key, u] : unplaced) r.unplaced.push_back(u);
  if (groups.empty())
    throw std::runtime_error("no measured task could be placed by the cost model (" + std::to_string(r.tasksRead) +
                             " read" + (r.unplaced.empty() ? "" : "; first: " + r.unplaced.front().why) + ")");

  std::vector<double> allBefore, allAfter;
  for (auto& [type, grp] : groups) {
    OpTypeFit f;
    f.opType = type;
    f.unit = grp.unit;
    f.tasks = static_cast<int64_t>(grp.samples.size());
    std::vector<double> works;
    for (const Sample& s : grp.samples) works.push_back(s.work);
    std::sort(works.begin(), works.end());
    for (size_t i = 0; i < works.size(); ++i)
      if (i == 0 || works[i] > works[i - 1] * 1.2) ++f.sizes;

    OpCalibration cal;
    bool fitted = false;
    if (f.sizes >= 2) {
      // measured = setup + scale × work, least squares over the tasks
      double sx = 0, sy = 0, sxx = 0, sxy = 0;
      const double n = static_cast<double>(grp.samples.size());
      for (const Sample& s : grp.samples) {
        sx += s.work;
        sy += s.measured;
        sxx += s.work * s.work;
        sxy += s.work * s.measured;
      }
      const double det = n * sxx - sx * sx;
      if (det > 0) {
        const double scale = (n * sxy - sx * sy) / det;
        const double setup = (sy - scale * sx) / n;
        if (scale > 0 && setup >= 0) {
          cal.workScale = scale;
          cal.setupUs = setup;
          cal.basis = "setup and work scale by least squares over " + std::to_string(f.tasks) + " tasks of " +
                      std::to_string(f.sizes) + " sizes";
          fitted = true;
        }
      }
    }
    if (!fitted) {
      std::vector<double> leftOver, ratio;
      for (const Sample& s : grp.samples) {
        leftOver.push_back(s.measured - s.work);
        if (s.work > 0) ratio.push_back(s.measured / s.work);
      }
      const double setup = median(leftOver);
      if (setup >= 0 || ratio.empty()) {
        cal.setupUs = std::max(0.0, setup);
        cal.workScale = 1;
        cal.basis = "setup only (the model's throughput kept): " + std::to_string(f.tasks) + " tasks of " +
                    (f.sizes >= 2 ? "sizes a line does not fit" : "one size");
      } else {
        cal.setupUs = 0;
        cal.workScale = median(ratio);
        cal.basis = "work scale only (the model overshoots with no setup): " + std::to_string(f.tasks) + " tasks";
      }
    }
    cal.tasks = f.tasks;
    f.fitted = cal;

    std::vector<double> errBefore, errAfter;
    for (const Sample& s : grp.samples) {
      const double after = cal.setupUs + cal.workScale * s.work;
      f.measuredUs += s.measured;
      f.simulatedBeforeUs += s.simulatedBefore;
      f.simulatedAfterUs += after;
      errBefore.push_back(absRelError(s.simulatedBefore, s.measured));
      errAfter.push_back(absRelError(after, s.measured));
    }
    const double n = static_cast<double>(grp.samples.size());
    f.measuredUs /= n;
    f.simulatedBeforeUs /= n;
    f.simulatedAfterUs /= n;
    f.medianAbsRelErrorBefore = median(errBefore);
    f.medianAbsRelErrorAfter = median(errAfter);
    allBefore.insert(allBefore.end(), errBefore.begin(), errBefore.end());
    allAfter.insert(allAfter.end(), errAfter.begin(), errAfter.end());
    r.after.opCalibration[type] = cal;
    r.opTypes.push_back(std::move(f));
  }
  std::stable_sort(r.opTypes.begin(), r.opTypes.end(), [](const OpTypeFit& a, const OpTypeFit& b) {
    return a.measuredUs * static_cast<double>(a.tasks) > b.measuredUs * static_cast<double>(b.tasks);
  });
  r.medianAbsRelErrorBefore = median(allBefore);
  r.medianAbsRelErrorAfter = median(allAfter);
  return r;
}

Json resultJson(const Result& r) {
  Json j = Json::object();
  Json sources = Json::array();
  for (const std::string& s : r.sources) sources.push(s);
  j.set("profiles", std::move(sources));
  j.set("soc", r.before.name);
  j.set("calibrated_soc", r.after.name);
  j.set("tasks", r.tasksRead);
  j.set("tasks_used", r.tasksUsed);
  j.set("median_abs_rel_error_before", r.medianAbsRelErrorBefore);
  j.set("median_abs_rel_error_after", r.medianAbsRelErrorAfter);
  Json types = Json::array();
  for (const OpTypeFit& f : r.opTypes) {
    Json o = Json::object();
    o.set("op_type", f.opType);
    o.set("unit", f.unit);
    o.set("tasks", f.tasks);
    o.set("sizes", f.sizes);
    o.set("measured_us", f.measuredUs);
    o.set("simulated_before_us", f.simulatedBeforeUs);
    o.set("simulated_after_us", f.simulatedAfterUs);
    o.set("median_abs_rel_error_before", f.medianAbsRelErrorBefore);
    o.set("median_abs_rel_error_after", f.medianAbsRelErrorAfter);
    o.set("setup_us", f.fitted.setupUs);
    o.set("work_scale", f.fitted.workScale);
    o.set("basis", f.fitted.basis);
    types.push(std::move(o));
  }
  j.set("op_types", std::move(types));
  Json unplaced = Json::array();
  for (const Unplaced& u : r.unplaced) {
    Json o = Json::object();
    o.set("op_type", u.opType);
    o.set("tasks", u.tasks);
    o.set("why", u.why);
    unplaced.push(std::move(o));
  }
  j.set("unplaced", std::move(unplaced));
  return j;
}

}  // namespace kiln::calibration
