// Measured runs, measured: reading a generated 100,000-task op_summary (as msprof writes it: quoted shape lists,
// trailing tabs after times), importing it into a fresh history as a run of its own, and calibrating the Ascend910B1
// profile on it; then the calibration on the shared profiles (../shared/models/ascend/msprof): per op type the
// median |simulated/measured - 1| before and after. Prints tables and writes JSON; asserts nothing.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "bench_json.h"
#include "emulator/timing/calibration.h"
#include "history/history_db.h"
#include "history/measured_import.h"
#include "io/msprof/msprof_profile.h"

using namespace kiln;
namespace fs = std::filesystem;

namespace {

double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// A profile of `tasks` tasks over four op types and four sizes each, timed like an NPU would (setup + work).
void writeProfile(const fs::path& csv, int tasks) {
  std::ofstream f(csv);
  f << "Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,OP State,Task Type,Task Start Time(us),"
       "Task Duration(us),Task Wait Time(us),Block Dim,Mix Block Dim,Input Shapes,Input Data Types,Input Formats,"
       "Output Shapes,Output Data Types,Output Formats\n";
  const char* types[] = {"MatMulV2", "Gelu", "Add", "SoftmaxV2"};
  double at = 1780295077844859.0;
  for (int i = 0; i < tasks; ++i) {
    const int kind = i % 4, size = 32 << ((i / 4) % 4);
    const std::string m = std::to_string(size);
    std::string in, out = "\"\"\"" + m + ",1024\"\"\"";
    if (kind == 0) in = "\"\"\"" + m + ",1024;1024,1024\"\"\"";
    else if (kind == 2) in = "\"\"\"" + m + ",1024;" + m + ",1024\"\"\"";
    else in = out;
    const double us = (kind == 0 ? 4.0 : 1.5) + size * (kind == 0 ? 0.05 : 0.01);
    char start[64];
    std::snprintf(start, sizeof start, "%.3f", at);
    f << "0,1," << i << ",3,op_" << i % 5000 << "," << types[kind] << ",static,"
      << (kind == 0 ? "AI_CORE" : "AI_VECTOR_CORE") << "," << start << "\t," << us << ",0.5,"
      << (kind == 0 ? 24 : 48) << ",0," << in << ",FLOAT" << (kind == 0 || kind == 2 ? ";FLOAT" : "") << ",ND,"
      << out << ",FLOAT,ND\n";
    at += us + 0.5;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string jsonPath = argc > 1 ? argv[1] : std::string(KILN_BENCH_OUT_DIR) + "/bench_msprof.json";
  Json rows = Json::object();
  const fs::path dir = fs::temp_directory_path() / "kiln_bench_msprof";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path csv = dir / "op_summary_0.csv";
  constexpr int kTasks = 100000;
  writeProfile(csv, kTasks);
  const SocProfile soc = SocProfile::load("ascend910b1");

  std::vector<double> readMs, importMs, calibrateMs;
  msprof::MeasuredProfile p;
  for (int rep = 0; rep < 3; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    p = msprof::readMeasuredProfile(csv.string());
    readMs.push_back(msSince(t0));
    fs::remove(dir / "h.db");
    t0 = std::chrono::steady_clock::now();
    {
      HistoryDb db((dir / "h.db").string());
      importMeasuredProfile(db, p, std::nullopt);
    }
    importMs.push_back(msSince(t0));
    t0 = std::chrono::steady_clock::now();
    calibration::calibrate({p}, soc);
    calibrateMs.push_back(msSince(t0));
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  std::printf("Generated op_summary: %d tasks, %.1f MB (median of 3)\n", kTasks,
              double(fs::file_size(csv)) / 1e6);
  std::printf("  read                 %9.1f ms\n", median(readMs));
  std::printf("  import as a run      %9.1f ms (fresh history)\n", median(importMs));
  std::printf("  calibrate            %9.1f ms\n", median(calibrateMs));
  Json gen = Json::object();
  gen.set("tasks", int64_t(p.tasks.size()));
  gen.set("bytes", int64_t(fs::file_size(csv)));
  gen.set("read_ms", median(readMs));
  gen.set("import_ms", median(importMs));
  gen.set("calibrate_ms", median(calibrateMs));
  rows.set("generated_op_summary", std::move(gen));

  const fs::path shared = fs::path(KILN_SHARED_DIR) / "models" / "ascend" / "msprof";
  if (!fs::is_directory(shared)) {
    std::printf("\n../shared/models/ascend/msprof absent: the calibration on measured profiles is skipped\n");
  } else {
    std::vector<msprof::MeasuredProfile> profiles;
    for (const auto& e : fs::directory_iterator(shared))
      if (e.is_directory()) profiles.push_back(msprof::readMeasuredProfile(e.path().string()));
    const calibration::Result r = calibration::calibrate(profiles, soc);
    std::printf("\nCalibration of %s on the shared profiles (%lld of %lld tasks placed)\n", soc.name.c_str(),
                static_cast<long long>(r.tasksUsed), static_cast<long long>(r.tasksRead));
    std::printf("  %-12s %6s %10s %12s %8s %12s %8s\n", "op type", "tasks", "measured", "sim before", "err", "sim after",
                "err");
    for (const calibration::OpTypeFit& f : r.opTypes)
      std::printf("  %-12s %6lld %7.2f us %9.2f us %7.1f%% %9.2f us %7.1f%%\n", f.opType.c_str(),
                  static_cast<long long>(f.tasks), f.measuredUs, f.simulatedBeforeUs,
                  100 * f.medianAbsRelErrorBefore, f.simulatedAfterUs, 100 * f.medianAbsRelErrorAfter);
    std::printf("  all placed tasks: %.1f%% before, %.1f%% after; not placed: %zu op type(s)\n",
                100 * r.medianAbsRelErrorBefore, 100 * r.medianAbsRelErrorAfter, r.unplaced.size());
    rows.set("shared_profiles", calibration::resultJson(r));
  }
  fs::remove_all(dir);
  return writeBenchJson(rows, jsonPath);
}
