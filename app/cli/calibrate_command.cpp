// kiln calibrate PROFILE... --soc NAME|FILE [-o MY_SOC.json] [--name NAME] [--json]: fits a SoC profile's per-op
// costs to runs measured by msprof (emulator/timing/calibration.h says what is fitted and how) and prints, per op
// type, the measured time and the simulation before and after.
#include <cstdio>
#include <fstream>
#include <iostream>

#include "cli/args.h"
#include "cli/commands.h"
#include "emulator/timing/calibration.h"
#include "util/json.h"
#include "util/load_error.h"

namespace kiln::cli {

namespace {

std::string fixed(double v, int digits) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", digits, v);
  return b;
}

std::string percent(double v) { return fixed(100.0 * v, 1) + "%"; }

void printTable(const calibration::Result& r, const std::string& written) {
  std::cout << "Calibrating " << r.before.name << " on " << r.tasksUsed << " of " << r.tasksRead
            << " measured tasks\n\n";
  std::printf("%-24s %-7s %6s %6s %11s %11s %11s %9s %9s\n", "op type", "unit", "tasks", "sizes", "measured",
              "sim before", "sim after", "err bef", "err aft");
  for (const calibration::OpTypeFit& f : r.opTypes)
    std::printf("%-24.24s %-7s %6lld %6d %9s us %8s us %8s us %9s %9s\n", f.opType.c_str(), f.unit.c_str(),
                static_cast<long long>(f.tasks), f.sizes, fixed(f.measuredUs, 2).c_str(),
                fixed(f.simulatedBeforeUs, 2).c_str(), fixed(f.simulatedAfterUs, 2).c_str(),
                percent(f.medianAbsRelErrorBefore).c_str(), percent(f.medianAbsRelErrorAfter).c_str());
  std::cout << "\nmedian |simulated/measured - 1| over tasks: " << percent(r.medianAbsRelErrorBefore) << " before, "
            << percent(r.medianAbsRelErrorAfter) << " after\n\nFitted (per op type; other op types keep "
            << r.before.name << "'s model):\n";
  for (const calibration::OpTypeFit& f : r.opTypes)
    std::cout << "  " << f.opType << ": setup " << fixed(f.fitted.setupUs, 3) << " us, work x"
              << fixed(f.fitted.workScale, 3) << "  (" << f.fitted.basis << ")\n";
  if (!r.unplaced.empty()) {
    std::cout << "\nNot placed by the cost model (not fitted):\n";
    for (const calibration::Unplaced& u : r.unplaced)
      std::cout << "  " << u.opType << "  " << u.tasks << " task" << (u.tasks == 1 ? "" : "s") << ": " << u.why
                << "\n";
  }
  if (!written.empty()) std::cout << "\nwrote " << written << " (use it with --soc " << written << ")\n";
}

}  // namespace

int runCalibrate(const Argv& argv) {
  const Args args = parseArgs(argv, {{"--json"}, {"--soc", "-o", "--name"}});
  if (args.positional.empty() || !args.value("--soc"))
    throw UsageError("usage: kiln calibrate PROFILE... --soc NAME|FILE [-o MY_SOC.json] [--name NAME] [--json]");
  SocProfile base;
  try {
    base = SocProfile::load(*args.value("--soc"));
  } catch (const std::runtime_error& e) {
    throw UsageError(e.what());
  }
  std::vector<msprof::MeasuredProfile> profiles;
  for (const std::string& path : args.positional) profiles.push_back(msprof::readMeasuredProfile(path));
  calibration::Result r;
  try {
    r = calibration::calibrate(profiles, base);
  } catch (const std::runtime_error& e) {
    throw LoadError(args.positional.front(), e.what());
  }
  r.after.name = args.value("--name").value_or(base.name + "-calibrated");
  std::string sources;
  for (const std::string& s : r.sources) sources += (sources.empty() ? "" : ", ") + s;
  r.after.notes = (base.notes.empty() ? "" : base.notes + " ") + "Calibrated by kiln calibrate on " +
                  std::to_string(r.tasksUsed) + " measured tasks (" + sources + "): op_calibration per op type.";
  std::string written;
  if (const auto out = args.value("-o")) {
    std::ofstream f(*out, std::ios::binary);
    f << r.after.toJsonText();
    if (!f.flush()) throw std::runtime_error(*out + ": cannot write");
    f.close();
    SocProfile::fromFile(*out);  // what was written must load as a profile
    written = *out;
  }
  if (args.has("--json"))
    {
    Json j = calibration::resultJson(r);
    if (!written.empty()) j.set("written", written);
    std::cout << j.dump(2) << "\n";
  }
  else
    printTable(r, written);
  return 0;
}

}  // namespace kiln::cli
