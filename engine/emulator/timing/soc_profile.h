#pragma once
// An NPU described by numbers only: cores, clocks, unit throughputs, on-chip buffer sizes, bandwidths and the fixed
// costs of tasks, events and host launches. Profiles are JSON files (resources/soc/<name>.json); nothing about a chip
// is hard-coded in the simulator, so a user can model another part or change an assumption and rerun.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kiln {

// A measured correction for one op type, fitted by `kiln calibrate` from profiled tasks: a task of that type costs
// setupUs + workScale × max(compute, memory) instead of kernelTaskUs + max(compute, memory). Keyed by GE's name for
// the op ("MatMulV2", "Gelu": an ONNX Gemm is GE's MatMulV2), so a fit touches that op type and nothing else.
struct OpCalibration {
  double setupUs = 0;     // per-task time that does not grow with the work (scalar setup, tiling, launch on device)
  double workScale = 1;   // measured / modelled for the part that does
  int64_t tasks = 0;      // how many measured tasks the numbers rest on
  std::string basis;      // how they were fitted ("setup and scale from 40 tasks of 3 sizes", ...)
};

struct SocProfile {
  std::string name;              // "Ascend910A"
  int aiCores = 32;              // AI Core count (each has a Cube and a Vector unit)
  int vectorCores = 0;           // separate Vector cores (Ascend910B's split); 0: the Vector unit is inside each AI Core
  double clockGhz = 1.0;
  double cubeFp16MacsPerCycle = 4096;  // per core: 16x16x16
  double cubeInt8MacsPerCycle = 8192;
  double cubeFp32MacsPerCycle = 1024;
  double vectorFp16LanesPerCycle = 128;  // per core
  double vectorFp32LanesPerCycle = 64;
  double ubBytes = 256 * 1024;     // Unified Buffer per core: where fused intermediates stay
  double l1Bytes = 1024 * 1024;
  double l2Bytes = 32.0 * 1024 * 1024;
  double hbmGBps = 1200;           // device memory bandwidth shared by all cores
  int aiCpuCores = 4;
  double aiCpuGflops = 4;          // per AI CPU core
  double aiCpuTaskUs = 15;         // fixed cost of an AI CPU kernel (scheduling, argument copy)
  double kernelTaskUs = 2;         // fixed device-side cost of an AI Core task (dispatch, block start)
  double eventUs = 0.5;            // an EVENT_RECORD / EVENT_WAIT
  double memcpyGBps = 300;         // on-device copies (MEMCPY_ASYNC)
  int dmaEngines = 2;
  double hostLaunchUs = 60;        // per task when the host drives the model (not sunk)
  std::string notes;               // where the numbers come from
  std::map<std::string, OpCalibration> opCalibration;  // "op_calibration": per op type, from measured runs

  const OpCalibration* calibrationFor(const std::string& geOpType) const {
    auto it = opCalibration.find(geOpType);
    return it == opCalibration.end() ? nullptr : &it->second;
  }
  // The profile as a JSON file the loader reads back (every field, calibration included).
  std::string toJsonText() const;

  // Throws std::runtime_error naming the file and the field for bad JSON or out-of-range numbers.
  static SocProfile fromJsonText(const std::string& text, const std::string& source);
  static SocProfile fromFile(const std::string& path);
  // A name ("Ascend910A", any case) looked up in the profile directories, or a path to a .json file.
  static SocProfile load(const std::string& nameOrPath);
  // The directories searched for <name>.json: $KILN_SOC_DIR, then the installed and the source resources/soc.
  static std::vector<std::string> searchPath();
  static std::vector<std::string> availableNames();
};

}  // namespace kiln
