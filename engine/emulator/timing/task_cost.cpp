#include "emulator/timing/task_cost.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "io/om/om_writer.h"
#include "ir/format.h"
#include "ir/graph.h"
#include "ir/opdefs/op_registry.h"

namespace kiln {

namespace {

double align16(double x) { return std::ceil(x / 16.0) * 16.0; }

std::vector<int64_t> extentsOf(const Value* v) {
  if (!v) return {};
  return v->type().shape.staticExtents().value_or(std::vector<int64_t>{});
}

double numel(const std::vector<int64_t>& e) {
  double n = 1;
  for (int64_t d : e) n *= static_cast<double>(d);
  return e.empty() ? 0 : n;
}

double bytesOf(const Value* v) {
  if (!v) return 0;
  const auto b = v->type().byteSize();
  return b ? static_cast<double>(*b) : 0;
}

// The integer forms (ConvInteger, QLinearConv, MatMulInteger, QLinearMatMul) run on the cube as GE runs int8
// convolutions and matrix products: int8 x int8 into int32 accumulators, at the profile's int8 MAC rate.
bool isConv(std::string_view op) {
  return op == "Conv" || op == "FusedConv" || op == "Conv2D" || op == "ConvInteger" || op == "QLinearConv";
}
bool isMatMul(std::string_view op) {
  return op == "MatMul" || op == "FusedMatMul" || op == "Gemm" || op == "MatMulV2" || op == "BatchMatMul" ||
         op == "MatMulInteger" || op == "QLinearMatMul" || op == "WeightQuantMatMul";
}

// Annotation lookups without building a key string or copying the value: the simulator costs every task.
const std::string* annotationOf(const Node& n, const std::string& key) {
  const auto& a = n.annotations();
  auto it = a.find(key);
  return it == a.end() ? nullptr : &it->second;
}

// A profile calibrated on measured runs replaces the fixed cost and scales the work of the op types it was fitted on.
void applyCalibration(const Node& n, const SocProfile& p, TaskCost& c) {
  if (p.opCalibration.empty()) return;
  const OpCalibration* cal = p.calibrationFor(om::geVocabularyType(n));
  if (!cal) return;
  c.fixedUs = cal->setupUs;
  c.computeUs *= cal->workScale;
  c.memoryUs *= cal->workScale;
  c.calibrated = true;
}

DType computeType(const Node& n) {
  const Value* x = n.input(0);
  return x ? x->type().dtype : DType::Float;
}

}  // namespace

std::string_view simUnitName(SimUnit u) {
  switch (u) {
    case SimUnit::Cube:
      return "cube";
    case SimUnit::Vector:
      return "vector";
    case SimUnit::AiCpu:
      return "aicpu";
    case SimUnit::Dma:
      return "dma";
    case SimUnit::Stream:
      return "stream";
  }
  return "stream";
}

CubeShape cubeShapeOf(const Node& n) {
  CubeShape s;
  const std::string_view op = n.opType();
  const std::vector<int64_t> out = extentsOf(n.output(0));
  if (out.empty()) return s;
  const Format outFormat = n.output(0)->type().format;
  if (isConv(op)) {
    // im2col: M = output pixels, N = output channels, K = input channels per group x kernel window.
    const Value* weight = n.input(op == "QLinearConv" ? 3 : 1);
    if (!weight) return s;
    const std::vector<int64_t> w = extentsOf(weight);
    if (w.size() < 2) return s;
    if (weight->type().format == Format::FRACTAL_Z && w.size() == 4) {
      // (C1·kh·kw, N1, 16, C0): N padded to 16, K = C1·C0·kh·kw (the padded input channels times the window)
      s.n = static_cast<double>(w[1] * w[2]);
      s.k = static_cast<double>(w[0] * w[3]);
    } else {
      s.n = static_cast<double>(w[0]);
      s.k = s.n > 0 ? numel(w) / s.n : 0;
    }
    if (outFormat == Format::NC1HWC0 && out.size() == 5)
      s.m = static_cast<double>(out[0] * out[2] * out[3]);
    else if (out.size() >= 2 && out[1] > 0)
      s.m = numel(out) / static_cast<double>(out[1]);
    s.batch = s.m > 0 && s.n > 0 && s.k > 0 ? 1 : 0;
    return s;
  }
  if (isMatMul(op) || op == "Attention") {
    const Value* lhs = n.input(0);
    const std::vector<int64_t> a = extentsOf(lhs);
    if (a.size() < 2 || out.size() < 2) return s;
    if (outFormat == Format::FRACTAL_NZ && out.size() >= 4) {
      // (..., N1, M1, 16, 16): the last two logical dims in 16x16 blocks
      s.n = static_cast<double>(out[out.size() - 4] * 16);
      s.m = static_cast<double>(out[out.size() - 3] * 16);
    } else {
      s.m = static_cast<double>(out[out.size() - 2]);
      s.n = static_cast<double>(out.back());
    }
    if (lhs->type().format == Format::FRACTAL_NZ && a.size() >= 4)
      s.k = static_cast<double>(a[a.size() - 4] * 16);
    else
      s.k = static_cast<double>(n.attrInt("transA", n.attrInt("trans_a", 0)) ? a[a.size() - 2] : a.back());
    s.batch = s.m > 0 && s.n > 0 ? numel(out) / (s.m * s.n) : 0;
    if (op == "Attention") {
      // Q·Kᵀ (seq x seq x head_dim) and P·V (seq x head_dim x seq) per head: twice a product of that size.
      s.batch *= 2;
    }
  }
  return s;
}

bool costKnowable(const Node& n) {
  auto known = [](const Value* v) {
    return !v || (v->type().isTensor() && v->type().dtype != DType::Undefined && v->type().shape.isStatic());
  };
  for (const Value* v : n.inputs())
    if (!known(v)) return false;
  for (const Value* v : n.outputs())
    if (!known(v)) return false;
  return true;
}

TaskCost taskCost(const Task& t, const SocProfile& p) {
  TaskCost c;
  const double cyclesPerUs = p.clockGhz * 1e3;
  const double hbmBytesPerUs = p.hbmGBps * 1e3;
  switch (t.type) {
    case TaskType::EventRecord:
    case TaskType::EventWait:
      c.fixedUs = c.durationUs = p.eventUs;
      return c;
    case TaskType::EndGraph:
      return c;
    case TaskType::MemcpyAsync: {
      c.unit = SimUnit::Dma;
      c.cores = 1;
      c.bytes = t.node ? 2 * bytesOf(t.node->output(0)) : 0;
      c.fixedUs = p.kernelTaskUs;
      c.memoryUs = c.bytes / (p.memcpyGBps * 1e3);
      c.durationUs = c.fixedUs + c.memoryUs;
      c.memoryBound = true;
      return c;
    }
    default:
      break;
  }
  if (!t.node) return c;
  const Node& n = *t.node;
  if (!costKnowable(n)) {
    // No guess: the task holds its unit for its fixed cost only, and says its work is unknown.
    static const std::string kUnitKey = "unit";
    const std::string* unit = annotationOf(n, kUnitKey);
    c.unit = t.type == TaskType::KernelEx ? SimUnit::AiCpu
             : unit && *unit == "cube"    ? SimUnit::Cube
                                          : SimUnit::Vector;
    c.cores = 1;
    c.fixedUs = c.unit == SimUnit::AiCpu ? p.aiCpuTaskUs : p.kernelTaskUs;
    c.durationUs = c.fixedUs;
    c.costUnknown = true;
    return c;
  }
  const OpCost oc = estimateCost(n);
  c.bytes = oc.bytesRead + oc.bytesWritten;
  c.flops = oc.flops;
  if (t.type == TaskType::KernelEx) {
    c.unit = SimUnit::AiCpu;
    c.cores = 1;
    c.fixedUs = p.aiCpuTaskUs;
    c.computeUs = c.flops / (p.aiCpuGflops * 1e3);
    c.memoryUs = c.bytes / hbmBytesPerUs;
    applyCalibration(n, p, c);
    c.durationUs = c.fixedUs + std::max(c.computeUs, c.memoryUs);
    c.memoryBound = c.memoryUs > c.computeUs;
    return c;
  }
  const DType dt = computeType(n);
  const CubeShape cube = cubeShapeOf(n);
  static const std::string kUnit = "unit", kSaved = "fusion.hbm_bytes_saved";
  const std::string* unit = annotationOf(n, kUnit);
  const bool onCube = unit ? *unit == "cube" : cube.m > 0;
  const int pool = onCube || p.vectorCores == 0 ? p.aiCores : p.vectorCores;
  c.cores = static_cast<int>(std::clamp<int64_t>(t.blockDim, 1, pool));
  c.fixedUs = p.kernelTaskUs;
  if (onCube && cube.m > 0) {
    c.unit = SimUnit::Cube;
    const double macs = cube.batch * align16(cube.m) * align16(cube.n) * align16(cube.k);
    const double rate = dt == DType::Int8 || dt == DType::UInt8 ? p.cubeInt8MacsPerCycle
                        : dt == DType::Float || dt == DType::Double ? p.cubeFp32MacsPerCycle
                                                                    : p.cubeFp16MacsPerCycle;
    c.flops = std::max(c.flops, 2 * cube.batch * cube.m * cube.n * cube.k);
    c.computeUs = macs / (rate * c.cores) / cyclesPerUs;
  } else {
    c.unit = SimUnit::Vector;
    const double lanes = dtypeSize(dt) >= 4 ? p.vectorFp32LanesPerCycle : p.vectorFp16LanesPerCycle;
    // A Vector op costs at least one pass over its output even when the estimate counts no arithmetic (TransData,
    // Transpose: pure data movement still runs through the Vector unit).
    double elements = 0;
    for (const Value* v : n.outputs()) elements += numel(extentsOf(v));
    c.computeUs = std::max(c.flops, elements) / (lanes * c.cores) / cyclesPerUs;
  }
  // Fused intermediates stay in the Unified Buffer only while they fit the cores' UB; beyond, they spill to HBM.
  if (const std::string* saved = annotationOf(n, kSaved)) {
    const double intermediates = std::strtod(saved->c_str(), nullptr);
    if (intermediates > p.ubBytes * c.cores) c.bytes += intermediates;
  }
  c.memoryUs = c.bytes / hbmBytesPerUs;
  applyCalibration(n, p, c);
  c.durationUs = c.fixedUs + std::max(c.computeUs, c.memoryUs);
  c.memoryBound = c.memoryUs > c.computeUs;
  return c;
}

}  // namespace kiln
